#include "advisor/report/output_file.h"

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <streambuf>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace gpuwise::advisor {
namespace {

std::string directoryOf(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// A descriptor of this process named as a path: /dev/fd/N, /proc/self/fd/N, /proc/PID/fd/N (what
// /dev/stdout and <(...) lead to). Its number, or -1. The link names an open file, or no path at
// all ("pipe:[123]"), and what the user means is the descriptor itself, its offset included.
int descriptorNamed(const std::string& path) {
  std::string_view rest;
  const std::string own = "/proc/" + std::to_string(::getpid()) + "/fd/";
  for (std::string_view prefix :
       {std::string_view("/dev/fd/"), std::string_view("/proc/self/fd/"), std::string_view(own)}) {
    if (path.starts_with(prefix)) rest = std::string_view(path).substr(prefix.size());
  }
  if (rest.empty() || rest.size() > 9) return -1;
  int fd = 0;
  for (char c : rest) {
    if (c < '0' || c > '9') return -1;
    fd = fd * 10 + (c - '0');
  }
  return fd;
}

// Follows `path` while it names a symlink, to the path of what it finally points at (which may
// not exist: a dangling link is written through to its target, as `>` in a shell does). Only the
// last component is resolved: the temporary file goes next to the target, in the same directory
// and so on the same file system, which is all rename() needs. False with `*descriptor` set when
// the chain reaches a descriptor (see above); false with `*error` set when it cannot be read.
bool resolveSymlinks(const std::string& path, std::string* target, int* descriptor, int* error) {
  std::string p = path;
  for (int hops = 0; hops < 40; ++hops) { // the kernel's own limit (ELOOP)
    if ((*descriptor = descriptorNamed(p)) >= 0) return false;
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) {
      *target = p;
      return true;
    }
    // The kernel's protected_symlinks rule, which open() would apply and our own resolution
    // must too: in a sticky world-writable folder (/tmp), a link is followed only when it is ours
    // or the folder owner's, or anyone could point root's report at /etc/passwd.
    struct stat dir {};
    if (::stat(directoryOf(p).c_str(), &dir) == 0 && (dir.st_mode & S_ISVTX) &&
        (dir.st_mode & S_IWOTH) && st.st_uid != ::geteuid() && st.st_uid != dir.st_uid) {
      *error = EACCES;
      return false;
    }
    std::vector<char> link(PATH_MAX + 1);
    const ssize_t n = ::readlink(p.c_str(), link.data(), link.size() - 1);
    if (n < 0) {
      *error = errno;
      return false;
    }
    std::string next(link.data(), size_t(n));
    p = next.starts_with('/') ? next : directoryOf(p) + "/" + next;
  }
  *error = ELOOP;
  return false;
}

bool writeAll(int fd, const char* data, size_t size, int* error) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = errno;
      return false;
    }
    data += n;
    size -= size_t(n);
  }
  return true;
}

std::atomic<unsigned> temp_counter{0};

} // namespace

// A plain buffer in front of the descriptor; the first error stops further writes.
class OutputFile::Buffer : public std::streambuf {
public:
  explicit Buffer(OutputFile& owner) : owner_(owner), data_(size_t{64} << 10) {
    setp(data_.data(), data_.data() + data_.size());
  }
  bool drain() {
    const size_t n = size_t(pptr() - pbase());
    setp(data_.data(), data_.data() + data_.size());
    if (owner_.errno_ != 0) return false;
    return n == 0 || writeAll(owner_.fd_, data_.data(), n, &owner_.errno_);
  }

protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) sputc(traits_type::to_char_type(c));
    return traits_type::not_eof(c);
  }
  int sync() override { return drain() ? 0 : -1; }

private:
  OutputFile& owner_;
  std::vector<char> data_;
};

OutputFile::OutputFile(std::string path, std::string target, std::string temp_path, int fd)
    : path_(std::move(path)), target_(std::move(target)), temp_path_(std::move(temp_path)), fd_(fd),
      buffer_(std::make_unique<Buffer>(*this)),
      stream_(std::make_unique<std::ostream>(buffer_.get())) {}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
}

std::unique_ptr<OutputFile> OutputFile::open(const std::string& path, std::string* error) {
  auto fail = [&](int e) {
    *error = path + ": cannot write: " + std::strerror(e);
    return nullptr;
  };
  std::string target;
  int descriptor = -1;
  int e = 0;
  if (!resolveSymlinks(path, &target, &descriptor, &e)) {
    if (descriptor < 0) return fail(e);
    // Written through a duplicate, which shares the descriptor's offset: `--json /dev/stdout >
    // out` puts the report ahead of the summary, where opening the file again would overwrite one
    // with the other and a rename would take the file away from the descriptor.
    const int fd = ::fcntl(descriptor, F_DUPFD_CLOEXEC, 3);
    if (fd < 0) return fail(errno);
    return std::unique_ptr<OutputFile>(new OutputFile(path, path, "", fd));
  }

  struct stat st {};
  if (::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) return fail(EISDIR);
    // A FIFO, a device, a socket's path: written through; nothing is created.
    const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return fail(errno);
    return std::unique_ptr<OutputFile>(new OutputFile(path, target, "", fd));
  }

  // A regular file or a new one: a temporary file beside the target, the same permissions a
  // newly created file gets (0666 less the umask), renamed into place on commit().
  std::string temp = target + ".tmp." + std::to_string(::getpid()) + "." +
                     std::to_string(temp_counter.fetch_add(1));
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) return fail(errno);
  return std::unique_ptr<OutputFile>(new OutputFile(path, target, temp, fd));
}

bool OutputFile::write(std::string_view data) {
  buffer_->sputn(data.data(), std::streamsize(data.size()));
  return errno_ == 0;
}

std::ostream& OutputFile::stream() {
  return *stream_;
}

bool OutputFile::commit(std::string* error) {
  stream_->flush();
  buffer_->drain();
  if (fd_ >= 0 && ::close(fd_) != 0 && errno_ == 0) errno_ = errno;
  fd_ = -1;
  if (errno_ == 0 && !temp_path_.empty()) {
    if (::rename(temp_path_.c_str(), target_.c_str()) != 0)
      errno_ = errno;
    else
      temp_path_.clear(); // in place: nothing left to remove
  }
  if (errno_ != 0) {
    *error = path_ + ": cannot write: " + std::strerror(errno_);
    return false;
  }
  return true;
}

bool writeOutputFile(const std::string& path, std::string_view content, std::string* error) {
  auto out = OutputFile::open(path, error);
  if (!out) return false;
  out->write(content);
  return out->commit(error);
}

} // namespace gpuwise::advisor
