/* What the program's executable holds itself: whether it defines a library's entry points (HDF5, PnetCDF
 * linked statically, as h5pcc and h5pfc do by default), which a preloaded library never sees called.
 * Read from the executable's symbol table (.symtab; a stripped program's .dynsym), with raw system calls:
 * iotuner's own reading is no phase, and no other tool in the job sees it. */
#include "program.h"
#include "state.h"

#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_TABLE (256u << 20) /* a symbol or string table past this is not read */

static int raw_open(const char *path)
{
    return (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
}

static int raw_read_at(int fd, void *buf, size_t n, off_t off)
{
    size_t done = 0;
    while (done < n) {
        long r = syscall(SYS_pread64, fd, (char *)buf + done, n - done, off + (off_t)done);
        if (r <= 0)
            return -1;
        done += (size_t)r;
    }
    return 0;
}

static void *read_section(int fd, const Elf64_Shdr *sh)
{
    if (sh->sh_size == 0 || sh->sh_size > MAX_TABLE)
        return NULL;
    void *p = malloc(sh->sh_size);
    if (p && raw_read_at(fd, p, sh->sh_size, (off_t)sh->sh_offset) != 0) {
        free(p);
        p = NULL;
    }
    return p;
}

/* Marks found[i] for every names[i] that a symbol table of the executable defines (a function or object
 * with a section, not an import). */
static void scan(int fd, const Elf64_Shdr *shdrs, size_t nsh, unsigned type, const char *const *names,
                 int *found, size_t n)
{
    for (size_t s = 0; s < nsh; s++) {
        if (shdrs[s].sh_type != type || shdrs[s].sh_link >= nsh || shdrs[s].sh_entsize != sizeof(Elf64_Sym))
            continue;
        Elf64_Sym *syms = read_section(fd, &shdrs[s]);
        char *str = syms ? read_section(fd, &shdrs[shdrs[s].sh_link]) : NULL;
        size_t nsyms = shdrs[s].sh_size / sizeof(Elf64_Sym), strsize = shdrs[shdrs[s].sh_link].sh_size;
        if (str)
            str[strsize - 1] = '\0'; /* every name ends inside the table */
        for (size_t i = 0; str && i < nsyms; i++) {
            if (syms[i].st_shndx == SHN_UNDEF || syms[i].st_name >= strsize)
                continue;
            const char *name = str + syms[i].st_name;
            for (size_t k = 0; k < n; k++)
                if (!found[k] && !strcmp(name, names[k]))
                    found[k] = 1;
        }
        free(str);
        free(syms);
    }
}

int iot_program_defines(const char *const *names, int *found, size_t n)
{
    memset(found, 0, n * sizeof *found);
    int fd = raw_open("/proc/self/exe");
    if (fd < 0)
        return -1;
    Elf64_Ehdr eh;
    Elf64_Shdr *shdrs = NULL;
    int rc = -1;
    if (raw_read_at(fd, &eh, sizeof eh, 0) == 0 && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
        eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_shentsize == sizeof(Elf64_Shdr) && eh.e_shnum > 0 &&
        eh.e_shnum < 65280) {
        shdrs = malloc(eh.e_shnum * sizeof *shdrs);
        if (shdrs && raw_read_at(fd, shdrs, eh.e_shnum * sizeof *shdrs, (off_t)eh.e_shoff) == 0) {
            int has_symtab = 0;
            for (size_t s = 0; s < eh.e_shnum; s++)
                has_symtab |= shdrs[s].sh_type == SHT_SYMTAB;
            scan(fd, shdrs, eh.e_shnum, has_symtab ? SHT_SYMTAB : SHT_DYNSYM, names, found, n);
            rc = 0;
        }
    }
    free(shdrs);
    syscall(SYS_close, fd);
    return rc;
}

int iot_program_wrapped(iot_phase_kind kind)
{
    /* the link object hands over the real H5Fcreate (--wrap's __real_H5Fcreate) */
    return kind == IOT_KIND_HDF5 && iot_linked_symbol("H5Fcreate") != NULL;
}
