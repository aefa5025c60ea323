// Package outfile is how every ibscope command writes an output file, by one
// rule:
//
//   - A name that does not exist yet, or a regular file, is written under a
//     hidden temporary name in the same directory (".NAME.RANDOM.tmp"),
//     synced and renamed over the final name only by Commit. A command that
//     fails, or is stopped by SIGINT or SIGTERM (RemovePending), never leaves
//     a partial file under the final name, nor its temporary file.
//   - A character device or a FIFO (/dev/null, /dev/stdout, a named pipe) is
//     written through: opened for writing, never truncated, replaced or
//     removed, so "-o /dev/null" does what users expect.
//   - A symbolic link is refused, never followed; so are directories,
//     sockets and block devices.
//
// Captures are the exception (OpenStream, for ibcap -w and its telemetry
// sidecar): a killed capture must leave a file that reads up to its last
// whole record, so a regular file is created or truncated in place
// (O_NOFOLLOW) and written as packets arrive; symbolic links and
// directories are still refused and devices and FIFOs written through.
//
// Dir confines a command's several outputs (ibsim's captures, telemetry and
// truth) to one directory: names must be local (no absolute paths, no ".."),
// no two outputs may share a name, and nothing is reached through a symbolic
// link that leaves the directory (os.Root).
package outfile
