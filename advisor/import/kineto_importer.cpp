// Orchestration: a reader thread (inflate + cut into batches, one file after another) feeding the
// calling thread (parse + build), through a queue bounded by the buffer pool.
//
//   reader:  ByteSource -> TraceChunker ──batches──▶ queue ──▶ caller: KinetoEventParser -> builder
//            (file end: metadata text)  ──────────────▶          finish() -> ProcessTrace
//
// Errors on either side stop both: the reader posts an Error item; the caller cancels the pool,
// which wakes a reader blocked on a buffer. Exceptions stay inside this file. One small file is
// read and parsed on the calling thread alone (serialPipeline).
#include "advisor/import/kineto_importer.h"
#include "profiler/model/printable_text.h"

#include "advisor/import/byte_source.h"
#include "advisor/import/heap_tuning.h"
#include "advisor/import/kineto_builder.h"
#include "advisor/import/kineto_event_parser.h"
#include "advisor/import/trace_chunker.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>

namespace gpuwise::advisor {
namespace {

struct Item {
  enum Kind { Batch, FileEnd, Error, Done } kind = Batch;
  size_t file = 0;
  EventBatch batch;
  std::string text; // FileEnd: metadata JSON; Error: the message
  bool saw_events = false;
  uint64_t json_bytes = 0;
  uint64_t events_dropped = 0; // by the prefilter, never decoded
};

class ItemQueue {
public:
  // With a sink, push hands each item to it on the pushing thread (the serial pipeline).
  explicit ItemQueue(std::function<void(Item&&)> sink = {}) : sink_(std::move(sink)) {}

  void push(Item item) {
    if (sink_) return sink_(std::move(item));
    {
      std::lock_guard lock(mutex_);
      items_.push_back(std::move(item));
    }
    cv_.notify_one();
  }
  Item pop() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return !items_.empty(); });
    Item item = std::move(items_.front());
    items_.pop_front();
    return item;
  }

private:
  std::function<void(Item&&)> sink_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Item> items_;
};

struct Input {
  std::string name;
  std::string path;      // empty for memory
  std::string_view data; // memory input
};

// simdjson On-Demand is built for Haswell on x86-64 (see CMakeLists.txt); refuse politely on an
// older CPU instead of dying on an illegal instruction.
bool cpuCanParse(std::string* why) {
#if defined(GPUWISE_IMPORT_HASWELL) && defined(__x86_64__)
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("bmi2") ||
      !__builtin_cpu_supports("popcnt")) {
    *why = "this build of the Kineto importer needs an x86-64 CPU with AVX2 (Haswell or newer); "
           "rebuild with -DGPUWISE_IMPORT_HASWELL=OFF";
    return false;
  }
#endif
  (void)why;
  return true;
}

// One input up to this size (on disk; a gzipped trace inflates to ~10x) is imported on the
// calling thread alone (serialPipeline): there is too little to overlap.
constexpr uint64_t kSerialInputBytes = uint64_t{1} << 20;

// State shared by the pipelines of one import call.
struct Shared {
  const std::vector<Input>& inputs;
  const KinetoImportOptions& options;
  uint64_t total_input = 0;
  std::atomic<size_t> next{0};     // the next file a reader takes
  std::atomic<bool> failed{false}; // any pipeline failed: the others stop early
  std::atomic<uint64_t> input_done{0};
  std::atomic<uint64_t> json_bytes{0};
  std::atomic<uint64_t> events{0};
  std::vector<model::ProcessTrace> processes; // by input index; each slot written by one thread
  std::mutex error_mutex;
  size_t error_file = SIZE_MAX;
  std::string error;

  void fail(size_t file, std::string message) {
    std::lock_guard lock(error_mutex);
    if (file < error_file || error_file == SIZE_MAX) { // report the first file in the user's order
      error_file = std::min(file, inputs.size() - 1);
      error = std::move(message);
    }
    failed.store(true);
  }
};

// Cuts one file into batches on the queue, then posts its FileEnd item; false after posting an
// Error item instead.
bool readFile(Shared& sh, size_t i, BufferPool& pool, ItemQueue& queue) {
  const auto& options = sh.options;
  const Input& in = sh.inputs[i];
  std::string openError;
  std::unique_ptr<ByteSource> source =
      in.path.empty() ? ByteSource::fromMemory(in.data) : ByteSource::openFile(in.path, &openError);
  if (!source) {
    queue.push({.kind = Item::Error, .file = i, .text = "cannot open: " + openError});
    return false;
  }
  uint64_t accounted = 0;
  auto account = [&] {
    const uint64_t consumed = source->inputConsumed();
    sh.input_done.fetch_add(consumed - accounted, std::memory_order_relaxed);
    accounted = consumed;
  };
  TraceChunker chunker;
  chunker.forceScalar(options.force_scalar_scan);
  chunker.keepOperators(options.include_operators);
  const bool ok = chunker.run(*source, pool, [&](const EventBatch& batch) {
    account();
    queue.push({.kind = Item::Batch, .file = i, .batch = batch});
  });
  if (!ok) {
    queue.push({.kind = Item::Error, .file = i, .text = chunker.error()});
    return false;
  }
  account();
  queue.push({.kind = Item::FileEnd,
              .file = i,
              .text = std::move(chunker.meta()),
              .saw_events = chunker.sawEvents(),
              .json_bytes = chunker.jsonBytes(),
              .events_dropped = chunker.eventsDropped()});
  return true;
}

// The reader thread: files taken one after another from `sh.next` until none is left, the caller
// stops or any pipeline failed. Ends with a Done item, or with an Error item.
void readFiles(Shared& sh, BufferPool& pool, ItemQueue& queue, const std::atomic<bool>& stop) {
  size_t i = SIZE_MAX;
  try {
    while (!stop.load() && !sh.failed.load()) {
      i = sh.next.fetch_add(1);
      if (i >= sh.inputs.size()) break;
      if (!readFile(sh, i, pool, queue)) return;
    }
  } catch (const std::exception& e) { // out of memory, mostly: never let it cross the thread
    queue.push({.kind = Item::Error, .file = i, .text = e.what()});
    return;
  }
  queue.push({.kind = Item::Done});
}

// Parses one batch into the builder; its buffer goes back to the pool even when parsing throws.
inline void parseBatch(KinetoEventParser& parser, BufferPool& pool, const EventBatch& b,
                       KinetoProcessBuilder& builder) {
  try {
    parser.parseBatch(b.buffer->data.get() + b.begin, b.end - b.begin,
                      b.buffer->capacity + 64 - b.begin, b.stream_offset + b.begin, builder);
  } catch (...) {
    pool.release(b.buffer);
    throw;
  }
  pool.release(b.buffer);
}

// Why a JSON file without a traceEvents array is refused; `meta` is its top-level text.
const char* notAChromeTrace(const std::string& meta) {
  return meta.find("\"nodes\"") != std::string::npos && meta.find("\"schema\"") != std::string::npos
             ? "a PyTorch execution trace (a graph of \"nodes\"), not a Chrome trace "
               "of timed events"
             : "a JSON object without a traceEvents array: not a Chrome trace";
}

// The calling thread's side, one item: parses a batch into the file's process, or finishes the
// process at its file's end. False once this pipeline is done (Done) or failed.
bool consumeItem(Shared& sh, BufferPool& pool, Item& item, KinetoEventParser& parser,
                 std::unique_ptr<KinetoProcessBuilder>& builder, bool reportProgress) {
  const auto& options = sh.options;
  try {
    if (item.kind == Item::Done) return false;
    if (item.kind == Item::Error) {
      sh.fail(item.file, item.text);
      return false;
    }
    if (!builder) builder = std::make_unique<KinetoProcessBuilder>(options);
    if (item.kind == Item::Batch) {
      parseBatch(parser, pool, item.batch, *builder);
      if (reportProgress && options.progress)
        options.progress(std::min(sh.input_done.load(std::memory_order_relaxed), sh.total_input),
                         sh.total_input);
      return !sh.failed.load(); // another pipeline failed: no point going on
    }
    // FileEnd
    if (!item.saw_events) {
      sh.fail(item.file, notAChromeTrace(item.text));
      return false;
    }
    sh.json_bytes.fetch_add(item.json_bytes);
    sh.events.fetch_add(item.events_dropped);
    sh.processes[item.file] = builder->finish(item.text);
    builder.reset();
    return true;
  } catch (const std::exception& e) {
    sh.fail(item.file, e.what());
    return false;
  }
}

// One reader thread feeding the calling thread; files taken one after another from `sh.next`, so
// inflating the next file overlaps parsing the last one.
void pipeline(Shared& sh, bool reportProgress) {
  BufferPool pool(std::max<size_t>(sh.options.batches_in_flight, 2),
                  std::max<size_t>(sh.options.batch_bytes, 256));
  ItemQueue queue;
  std::atomic<bool> stop{false};
  std::thread reader([&] { readFiles(sh, pool, queue, stop); });

  KinetoEventParser parser;
  std::unique_ptr<KinetoProcessBuilder> builder;
  for (;;) {
    Item item = queue.pop();
    if (!consumeItem(sh, pool, item, parser, builder, reportProgress)) break;
  }
  stop.store(true);
  pool.cancel(); // wakes a reader waiting for a buffer; a finished reader does not care
  reader.join();
  sh.events.fetch_add(parser.eventsSeen());
}

// The same on the calling thread alone, each batch parsed as soon as it is cut: for one small
// file. A reader thread there cost more than the whole import: a new thread waits behind the
// running tasks of a busy machine for a scheduler slice, 3-8 ms against the import's 0.3 ms
// (tests/bench/cli_startup_bench.cpp, docs/performance.md).
void serialPipeline(Shared& sh) {
  BufferPool pool(std::max<size_t>(sh.options.batches_in_flight, 2),
                  std::max<size_t>(sh.options.batch_bytes, 256));
  KinetoEventParser parser;
  std::unique_ptr<KinetoProcessBuilder> builder;
  bool open = true;
  std::atomic<bool> stop{false};
  ItemQueue queue([&](Item&& item) {
    if (open) {
      open = consumeItem(sh, pool, item, parser, builder, true);
      if (open) return;
      stop.store(true);
      pool.cancel(); // the chunker's next buffer request fails: it stops with an Error item
    } else if (item.kind == Item::Batch) {
      pool.release(item.batch.buffer);
    }
  });
  readFiles(sh, pool, queue, stop);
  sh.events.fetch_add(parser.eventsSeen());
}

KinetoImportResult run(const std::vector<Input>& inputs, const KinetoImportOptions& options) {
  tuneAdvisorHeap(); // each trace's record vectors reuse the pages the last one freed
  KinetoImportResult result;
  result.trace.source.kind = model::SourceKind::Kineto;
  for (const auto& in : inputs)
    result.trace.source.files.push_back(in.name);
  if (inputs.empty()) {
    result.error = "no trace files given";
    return result;
  }
  std::string why;
  if (!cpuCanParse(&why)) {
    result.error = inputs.front().name + ": " + why;
    return result;
  }

  Shared sh{.inputs = inputs, .options = options};
  for (const auto& in : inputs) {
    std::error_code ec;
    const auto size = in.path.empty() ? in.data.size() : std::filesystem::file_size(in.path, ec);
    sh.total_input += ec ? 0 : uint64_t(size);
  }
  sh.processes.resize(inputs.size());

  // The ranks of a job are independent until the analyzers: several pipelines on a big host, each
  // of two threads. The calling thread runs the first, so progress is reported from it.
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t wanted = options.parallel_files ? options.parallel_files : cores / 2;
  const size_t pipelines = std::clamp<size_t>(wanted, 1, inputs.size());
  if (inputs.size() == 1 && sh.total_input <= kSerialInputBytes) {
    serialPipeline(sh);
  } else {
    std::vector<std::thread> others;
    for (size_t p = 1; p < pipelines; ++p)
      others.emplace_back([&sh] { pipeline(sh, false); });
    pipeline(sh, true);
    for (auto& t : others)
      t.join();
  }

  result.stats.input_bytes = std::min(sh.input_done.load(), sh.total_input);
  result.stats.json_bytes = sh.json_bytes.load();
  result.stats.events = sh.events.load();
  if (sh.error_file != SIZE_MAX) {
    result.error = inputs[sh.error_file].name + ": " + model::printableText(sh.error);
    return result;
  }
  result.trace.processes = std::move(sh.processes);
  if (options.progress) options.progress(sh.total_input, sh.total_input);
  return result;
}

} // namespace

KinetoImportResult importKineto(const std::vector<std::string>& paths,
                                const KinetoImportOptions& options) {
  std::vector<Input> inputs;
  inputs.reserve(paths.size());
  for (const auto& p : paths)
    inputs.push_back({.name = p, .path = p});
  return run(inputs, options);
}

KinetoImportResult importKinetoBuffer(std::string_view data, const std::string& name,
                                      const KinetoImportOptions& options) {
  return run({Input{.name = name, .data = data}}, options);
}

} // namespace gpuwise::advisor
