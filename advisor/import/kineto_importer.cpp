// Orchestration: a reader thread (inflate + cut into batches, one file after another) feeding the
// calling thread (parse + build), through a queue bounded by the buffer pool.
//
//   reader:  ByteSource -> TraceChunker ──batches──▶ queue ──▶ caller: KinetoEventParser -> builder
//            (file end: metadata text)  ──────────────▶          finish() -> ProcessTrace
//
// Errors on either side stop both: the reader posts an Error item; the caller cancels the pool,
// which wakes a reader blocked on a buffer. Exceptions stay inside this file.
#include "advisor/import/kineto_importer.h"

#include "advisor/import/byte_source.h"
#include "advisor/import/kineto_builder.h"
#include "advisor/import/kineto_event_parser.h"
#include "advisor/import/trace_chunker.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <mutex>
#include <thread>

namespace gpuwise::advisor {
namespace {

struct Item {
  enum Kind { Batch, FileEnd, Error } kind = Batch;
  size_t file = 0;
  EventBatch batch;
  std::string text; // FileEnd: metadata JSON; Error: the message
  bool saw_events = false;
  uint64_t json_bytes = 0;
  uint64_t events_dropped = 0; // by the prefilter, never decoded
};

class ItemQueue {
public:
  void push(Item item) {
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
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Item> items_;
};

struct Input {
  std::string name;
  std::string path;     // empty for memory
  std::string_view data; // memory input
};

// simdjson On-Demand is built for Haswell on x86-64 (see CMakeLists.txt); refuse politely on an
// older CPU instead of dying on an illegal instruction.
bool cpuCanParse(std::string* why) {
#if defined(GPUWISE_IMPORT_HASWELL) && defined(__x86_64__)
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("bmi2") || !__builtin_cpu_supports("popcnt")) {
    *why = "this build of the Kineto importer needs an x86-64 CPU with AVX2 (Haswell or newer); "
           "rebuild with -DGPUWISE_IMPORT_HASWELL=OFF";
    return false;
  }
#endif
  (void)why;
  return true;
}

KinetoImportResult run(const std::vector<Input>& inputs, const KinetoImportOptions& options) {
  KinetoImportResult result;
  result.trace.source.kind = model::SourceKind::Kineto;
  for (const auto& in : inputs) result.trace.source.files.push_back(in.name);
  if (inputs.empty()) {
    result.error = "no trace files given";
    return result;
  }
  std::string why;
  if (!cpuCanParse(&why)) {
    result.error = inputs.front().name + ": " + why;
    return result;
  }

  uint64_t totalInput = 0;
  for (const auto& in : inputs) {
    std::error_code ec;
    totalInput += in.path.empty() ? in.data.size() : uint64_t(std::filesystem::file_size(in.path, ec));
  }

  const size_t batchBytes = std::max<size_t>(options.batch_bytes, 256);
  BufferPool pool(std::max<size_t>(options.batches_in_flight, 2), batchBytes);
  ItemQueue queue;
  std::atomic<uint64_t> inputDone{0};
  std::atomic<bool> stop{false};

  std::thread reader([&] {
    size_t i = 0;
    try {
      uint64_t finishedInput = 0;
      for (; i < inputs.size() && !stop.load(); ++i) {
        std::string openError;
        std::unique_ptr<ByteSource> source = inputs[i].path.empty()
                                                 ? ByteSource::fromMemory(inputs[i].data)
                                                 : ByteSource::openFile(inputs[i].path, &openError);
        if (!source) {
          queue.push({.kind = Item::Error, .file = i, .text = "cannot open: " + openError});
          return;
        }
        TraceChunker chunker;
        chunker.forceScalar(options.force_scalar_scan);
        chunker.keepOperators(options.include_operators);
        const bool ok = chunker.run(*source, pool, [&](const EventBatch& batch) {
          inputDone.store(finishedInput + source->inputConsumed(), std::memory_order_relaxed);
          queue.push({.kind = Item::Batch, .file = i, .batch = batch});
        });
        if (!ok) {
          queue.push({.kind = Item::Error, .file = i, .text = chunker.error()});
          return;
        }
        finishedInput += source->inputSize();
        inputDone.store(finishedInput, std::memory_order_relaxed);
        queue.push({.kind = Item::FileEnd, .file = i, .text = std::move(chunker.meta()),
                    .saw_events = chunker.sawEvents(), .json_bytes = chunker.jsonBytes(),
                    .events_dropped = chunker.eventsDropped()});
      }
    } catch (const std::exception& e) { // out of memory, mostly: never let it cross the thread
      queue.push({.kind = Item::Error, .file = std::min(i, inputs.size() - 1), .text = e.what()});
    }
  });

  KinetoEventParser parser;
  std::unique_ptr<KinetoProcessBuilder> builder;
  size_t file = 0;
  std::string error;
  try {
    while (result.trace.processes.size() < inputs.size()) {
      Item item = queue.pop();
      file = item.file;
      if (item.kind == Item::Error) {
        error = item.text;
        break;
      }
      if (!builder) builder = std::make_unique<KinetoProcessBuilder>(options);
      if (item.kind == Item::Batch) {
        const EventBatch& b = item.batch;
        try {
          parser.parseBatch(b.buffer->data.get() + b.begin, b.end - b.begin, b.buffer->capacity + 64 - b.begin,
                            b.stream_offset + b.begin, *builder);
        } catch (...) {
          pool.release(b.buffer);
          throw;
        }
        pool.release(b.buffer);
        if (options.progress) options.progress(inputDone.load(std::memory_order_relaxed), totalInput);
        continue;
      }
      // FileEnd
      if (!item.saw_events) {
        error = item.text.find("\"nodes\"") != std::string::npos && item.text.find("\"schema\"") != std::string::npos
                    ? "a PyTorch execution trace (a graph of \"nodes\"), not a Chrome trace of timed events"
                    : "a JSON object without a traceEvents array: not a Chrome trace";
        break;
      }
      result.stats.json_bytes += item.json_bytes;
      result.stats.events += item.events_dropped;
      result.trace.processes.push_back(builder->finish(item.text));
      builder.reset();
    }
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (!error.empty()) {
    stop.store(true);
    pool.cancel();
  }
  reader.join();
  // Buffers still queued belong to the pool; nothing else to free.
  result.stats.input_bytes = inputDone.load();
  result.stats.events += parser.eventsSeen();
  if (!error.empty()) {
    result.error = inputs[std::min(file, inputs.size() - 1)].name + ": " + error;
    result.trace.processes.clear();
  } else if (options.progress) {
    options.progress(totalInput, totalInput);
  }
  return result;
}

} // namespace

KinetoImportResult importKineto(const std::vector<std::string>& paths, const KinetoImportOptions& options) {
  std::vector<Input> inputs;
  for (const auto& p : paths) inputs.push_back({.name = p, .path = p});
  return run(inputs, options);
}

KinetoImportResult importKinetoBuffer(std::string_view data, const std::string& name,
                                      const KinetoImportOptions& options) {
  return run({Input{.name = name, .data = data}}, options);
}

} // namespace gpuwise::advisor
