/*
 * entry_check.c: does a user's file define the entry a registration names,
 * read from its bytes without running any of it (issue 29 item 5)?
 *
 *   python  a top-level def, async def, class or assignment of the name, or
 *           an import that binds it (`from m import name`, `import m as
 *           name`): what `getattr(module, name)` finds after the import,
 *           short of code that makes names at run time (globals(), exec),
 *           which a registration then cannot see and refuses.
 *   library the name in the ELF file's dynamic symbol table, defined there
 *           (not an undefined reference) as a function: what dlsym() finds.
 *           The file is parsed, never loaded: loading a library runs its
 *           constructors, in whatever process loads it.
 */
#include <ctype.h>
#include <elf.h>
#include <stdio.h>
#include <string.h>

#include "impl_int.h"

static int
ident_char(int c)
{
	return isalnum(c) || c == '_';
}

/* Does s (of n bytes) begin with word, not followed by an identifier character? */
static int
starts_word(const char *s, size_t n, const char *word)
{
	size_t		w = strlen(word);

	return n >= w && memcmp(s, word, w) == 0 && (n == w || !ident_char((unsigned char) s[w]));
}

/* Does the line (of n bytes) hold name as a whole word? */
static int
has_word(const char *s, size_t n, const char *name)
{
	size_t		w = strlen(name);

	for (size_t i = 0; i + w <= n; i++)
		if (memcmp(s + i, name, w) == 0 && (i == 0 || !ident_char((unsigned char) s[i - 1])) &&
			(i + w == n || !ident_char((unsigned char) s[i + w])))
			return 1;
	return 0;
}

static int
python_defines(const char *text, size_t len, const char *name)
{
	size_t		i = 0;

	while (i < len)
	{
		const char *line = text + i;
		const char *nl = memchr(line, '\n', len - i);
		size_t		n = nl ? (size_t) (nl - line) : len - i;
		const char *p = line;
		size_t		m = n;

		i += n + 1;
		if (m == 0 || isspace((unsigned char) p[0]))
			continue;			/* not at the module's top level */
		if (starts_word(p, m, "async"))
		{
			p += 5, m -= 5;
			while (m > 0 && (*p == ' ' || *p == '\t'))
				p++, m--;
		}
		if (starts_word(p, m, "def") || starts_word(p, m, "class"))
		{
			size_t		k = p[0] == 'd' ? 3 : 5;

			while (k < m && (p[k] == ' ' || p[k] == '\t'))
				k++;
			if (starts_word(p + k, m - k, name))
				return 1;
			continue;
		}
		if (starts_word(p, m, "from") || starts_word(p, m, "import"))
		{
			if (has_word(p, m, name))
				return 1;
			continue;
		}
		if (starts_word(p, m, name))
		{
			size_t		k = strlen(name);

			while (k < m && (p[k] == ' ' || p[k] == '\t'))
				k++;
			/* name = ..., name: T = ..., name, other = ... */
			if (k < m && (p[k] == ':' || p[k] == ',' || (p[k] == '=' && (k + 1 == m || p[k + 1] != '='))))
				return 1;
		}
	}
	return 0;
}

/*
 * 1: the ELF file exports name as a defined function; 0: it does not; -1:
 * not a 64-bit little-endian ELF file whose dynamic symbol table can be read.
 */
static int
elf_exports(const unsigned char *b, size_t len, const char *name)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *) b;
	int			found = 0;

	if (len < sizeof(Elf64_Ehdr) || memcmp(b, ELFMAG, SELFMAG) != 0 ||
		b[EI_CLASS] != ELFCLASS64 || b[EI_DATA] != ELFDATA2LSB)
		return -1;
	if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > len ||
		(size_t) eh->e_shnum > (len - eh->e_shoff) / sizeof(Elf64_Shdr))
		return -1;
	for (int s = 0; s < eh->e_shnum; s++)
	{
		const Elf64_Shdr *sh = (const Elf64_Shdr *) (b + eh->e_shoff) + s;
		const Elf64_Shdr *st;

		if (sh->sh_type != SHT_DYNSYM)
			continue;
		if (sh->sh_link >= eh->e_shnum || sh->sh_entsize != sizeof(Elf64_Sym) ||
			sh->sh_offset > len || sh->sh_size > len - sh->sh_offset)
			return -1;
		st = (const Elf64_Shdr *) (b + eh->e_shoff) + sh->sh_link;
		if (st->sh_offset > len || st->sh_size > len - st->sh_offset)
			return -1;
		for (size_t k = 0; k < sh->sh_size / sizeof(Elf64_Sym); k++)
		{
			const Elf64_Sym *sym = (const Elf64_Sym *) (b + sh->sh_offset) + k;
			const char *strs = (const char *) b + st->sh_offset;
			size_t		room;
			int			type = ELF64_ST_TYPE(sym->st_info);

			if (sym->st_name >= st->sh_size)
				continue;
			room = st->sh_size - sym->st_name;
			if (memchr(strs + sym->st_name, '\0', room) == NULL || strcmp(strs + sym->st_name, name) != 0)
				continue;
			if (sym->st_shndx != SHN_UNDEF && (type == STT_FUNC || type == STT_GNU_IFUNC))
				found = 1;
		}
		return found;
	}
	return -1;
}

bool
kb_ext_entry_defined(int kind, const kb_ext_source *src, const char *path, const char *symbol,
					 char *err, size_t errlen)
{
	if (kind == KB_EXT_PYTHON)
	{
		if (python_defines((const char *) src->bytes, src->len, symbol))
			return true;
		snprintf(err, errlen, "%s defines no '%s' at its top level (a def, class, assignment or import of that name)",
				 path, symbol);
		return false;
	}
	switch (elf_exports(src->bytes, src->len, symbol))
	{
		case 1:
			return true;
		case 0:
			snprintf(err, errlen, "%s exports no function '%s' (its dynamic symbol table; build with -fPIC -shared, and extern \"C\" in C++)",
					 path, symbol);
			return false;
		default:
			snprintf(err, errlen, "%s is not a 64-bit ELF shared library (build it with cc -shared -fPIC)", path);
			return false;
	}
}
