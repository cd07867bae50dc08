// SPDX-License-Identifier: GPL-2.0
/* Controller-name rules and their bpffs spelling (names.h). */
#include <string.h>
#include "cli.h"
#include "names.h"

int vk_check_name(const char *name, char *err)
{
	size_t n = strlen(name);

	if (n == 0 || n >= VK_NAME_MAX)
		return vk_err(err, "name '%s' must be 1 to %d characters", name, VK_NAME_MAX - 1);
	if (name[0] == '.')
		return vk_err(err, "name '%s' must not start with '.'", name);
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.'))
			return vk_err(err, "name '%s' may contain only letters, digits, '_' and '.'", name);
	}
	return 0;
}

static void replace_char(char *out, const char *in, char from, char to)
{
	for (; *in; in++, out++)
		*out = *in == from ? to : *in;
	*out = '\0';
}

void vk_name_to_dir(char *out, const char *name)
{
	replace_char(out, name, '.', VK_PIN_DOT);
}

void vk_name_from_dir(char *out, const char *dir)
{
	replace_char(out, dir, VK_PIN_DOT, '.');
}
