/* Paths (paths.c): what the phases and the layers know of a file's name. */
#ifndef IOTUNER_PATHS_H
#define IOTUNER_PATHS_H

#include <stddef.h>

/* Lexical normalization to an absolute path; strips ROMIO prefixes ("ufs:"). */
void iot_normalize_path(const char *path, char *out, size_t outlen);
/* File system of the directory that holds path ("ext4", "lustre", ...), cached per directory. */
const char *iot_file_system_of(const char *path);
/* Files that are never a phase: system directories, the settings file, ROMIO_HINTS (iot_path_ignore). */
int iot_path_ignored(const char *normpath);
void iot_path_ignore(const char *path);
/* Under a directory of IOTUNER_EXCLUDE_DIRS: not a phase, not tuned. */
int iot_path_excluded(const char *normpath);
/* The working directory changed (chdir wrappers). */
void iot_cwd_changed(void);
/* At start-up: what the path helpers read from the environment. */
void iot_paths_init(void);

#endif
