// The one way the CLI writes an output file (reports, diffs, Chrome traces): what the user named
// is honoured as what it is.
//
//   - A symlink is followed (to the end of its chain, dangling or not): the link stays a link and
//     its target gets the content.
//   - A regular file, or a path that does not exist yet, is written to a temporary file in the
//     directory of the resolved target and renamed over it on commit(), so a reader never sees
//     half a file and a failed write leaves the old content in place.
//   - Anything else (a FIFO, a character device such as /dev/null, a terminal) is written
//     through, in place: renaming over it would replace a device node with a regular file (as
//     root, /dev/null itself).
//   - A descriptor named as a path (/dev/stdout, /dev/fd/N, /proc/self/fd/N) is written through a
//     duplicate of it, whatever is behind it (a pipe, or the file of `> out`, which a rename would
//     take away from the descriptor); its offset is shared, so later output follows.
//
// Errors are one line, "PATH: cannot write: reason", naming the path as the user gave it; a write
// error (ENOSPC, EPIPE, EIO) is an error even on a device, where nothing can be rolled back.
// Opening a FIFO blocks until a reader opens it, as a shell redirection does.
//
// One thread per OutputFile. Never throws.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <string_view>

namespace gpuwise::advisor {

class OutputFile {
public:
  // nullptr with `error` set when the output cannot be opened (a missing directory, a directory
  // named as the file, permissions).
  static std::unique_ptr<OutputFile> open(const std::string& path, std::string* error);
  ~OutputFile(); // without commit(): the temporary file is removed, the target left as it was
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Buffered; a failure is remembered and reported by commit().
  bool write(std::string_view data);
  // The same bytes as write(), for writers that stream into an std::ostream.
  std::ostream& stream();
  // Flushes and closes, then renames the temporary file into place. False with `error` set when
  // any write, the close or the rename failed.
  bool commit(std::string* error);

  // Whether the content goes through a temporary file and a rename (regular and new files).
  bool atomic() const { return !temp_path_.empty(); }

private:
  class Buffer;
  OutputFile(std::string path, std::string target, std::string temp_path, int fd);
  bool flushBuffer();

  std::string path_;      // as the user gave it (errors)
  std::string target_;    // symlinks resolved
  std::string temp_path_; // empty when writing through
  int fd_ = -1;
  int errno_ = 0; // the first write error
  std::unique_ptr<Buffer> buffer_;
  std::unique_ptr<std::ostream> stream_;
};

// Writes `content` to `path` through OutputFile. False with `error` set to "PATH: reason".
bool writeOutputFile(const std::string& path, std::string_view content, std::string* error);

} // namespace gpuwise::advisor
