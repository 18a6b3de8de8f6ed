#!/usr/bin/env python3
"""Independent reference for the waste-by-team recording rules' unit tests.

Python standard library only: no PromQL, no code shared with the rules. It reads the input series
of tests/containers/waste_rules_test.yaml (promtool's expanding notation: 'a+bxN', 'axN', 'stale'),
recomputes every expected sample of its promql_expr_test entries from the definitions of
docs/metrics.md ("Waste by team"), and says where the file's expectations differ:

  increase        Prometheus 2.42's extrapolatedRate for a counter over the samples in
                  [T - window, T]: (last - first), extrapolated to the window's ends by the gap
                  when it is under 1.1 average sample intervals, else by half an interval, and
                  towards the start no further than where the counter would reach zero
  GPU             one (process, GPU): the series' labels without `cause`
  idle hours      sum over causes of increase(gpuwise_gpu_idle_seconds_total) / 3600, per GPU
  GPU hours       idle hours + increase(gpuwise_gpu_busy_seconds_total) / 3600 (the GPU span)
  price           the last gpuwise_gpu_hour_price_dollars sample in the window; a GPU without one
                  has no dollars
  namespace, job  sums over their GPUs of hours, and of hours x price over the priced GPUs
  pod dollars     sum over the pod's priced GPUs of GPU hours x price
  recommendation  the last expected saving ratio in the window x its pod's dollars; `id` sums them,
                  top10 keeps the ten largest

Usage: python3 tests/tools/waste_rules_reference.py [tests/containers/waste_rules_test.yaml]
Prints one line per expected sample checked; exits 1 when one differs (relative 1e-9) or is
missing, or when the file expects a sample the definitions do not give.
"""

import re
import sys

DURATION = re.compile(r"^(\d+)([smhdw])$")
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
COMMON = ("namespace", "pod", "container", "job_name", "rank", "Hostname", "gpu", "cuda_device",
          "UUID")


def seconds(duration):
    m = DURATION.match(duration)
    return int(m.group(1)) * UNITS[m.group(2)]


def parse_series(text):
    name, _, rest = text.partition("{")
    labels = dict(re.findall(r'([A-Za-z_]\w*)="([^"]*)"', rest))
    return name, labels


def expand(values, interval):
    """[(time, value)] of promtool's notation; the series ends at a stale marker."""
    out, i = [], 0
    for token in values.split():
        if token == "stale":
            break
        m = re.match(r"^(-?[\d.]+)(?:([+-][\d.]+))?x(\d+)$", token)
        if m:
            start, step, n = float(m.group(1)), float(m.group(2) or 0), int(m.group(3))
            for k in range(n + 1):
                out.append((i * interval, start + k * step))
                i += 1
        else:
            out.append((i * interval, float(token)))
            i += 1
    return out


def parse_tests(path):
    """The file's tests: interval, input series and expected samples (a line-based reader for the
    structure promtool's test files have; the file is YAML, but PyYAML is not standard library)."""
    tests, pending = [], {}
    for line in open(path):
        s = line.strip()
        if s.startswith("- interval:"):
            tests.append({"interval": seconds(s.split(":", 1)[1].strip()), "series": [],
                          "expect": []})
        elif s.startswith("- series:"):
            pending["series"] = s.split(":", 1)[1].strip().strip("'")
        elif s.startswith("values:"):
            name, labels = parse_series(pending.pop("series"))
            tests[-1]["series"].append((name, labels, s.split(":", 1)[1].strip().strip("'")))
        elif s.startswith("- expr:"):
            tests[-1]["expect"].append({"expr": s.split(":", 1)[1].strip(), "samples": {}})
        elif s.startswith("eval_time:"):
            tests[-1]["expect"][-1]["at"] = seconds(s.split(":", 1)[1].strip())
        elif s.startswith("- labels:"):
            pending["labels"] = s.split(":", 1)[1].strip().strip("'")
        elif s.startswith("value:"):
            key = canonical(*parse_series(pending.pop("labels")))
            tests[-1]["expect"][-1]["samples"][key] = float(s.split(":", 1)[1])
    return tests


def canonical(name, labels):
    return name + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"


def increase(samples, at, window):
    inside = [(t, v) for t, v in samples if at - window <= t <= at]
    if len(inside) < 2:
        return None
    (first_t, first), (last_t, last) = inside[0], inside[-1]
    result = last - first  # the test's counters never reset
    sampled = last_t - first_t
    average = sampled / (len(inside) - 1)
    to_start, to_end = first_t - (at - window), at - last_t
    if result > 0 and first >= 0:
        to_start = min(to_start, sampled * first / result)
    threshold = 1.1 * average
    extended = sampled + (to_start if to_start < threshold else average / 2)
    extended += to_end if to_end < threshold else average / 2
    return result * extended / sampled


def last_in_window(samples, at, window):
    inside = [v for t, v in samples if at - window <= t <= at]
    return inside[-1] if inside else None


def figures(series, interval, at, window):
    """Every recorded series of the window at `at`, as {canonical name: value}."""
    idle, busy, price, ratio = {}, {}, {}, {}
    for name, labels, values in series:
        samples = expand(values, interval)
        gpu = tuple((k, labels[k]) for k in COMMON if labels.get(k))
        if name == "gpuwise_gpu_idle_seconds_total":
            inc = increase(samples, at, window)
            if inc is not None:
                idle[gpu] = idle.get(gpu, 0.0) + inc / 3600
        elif name == "gpuwise_gpu_busy_seconds_total":
            inc = increase(samples, at, window)
            if inc is not None:
                busy[gpu] = inc / 3600
        elif name == "gpuwise_gpu_hour_price_dollars":
            last = last_in_window(samples, at, window)
            if last is not None:
                price[gpu] = last
        elif name == "gpuwise_recommendation_expected_saving_ratio":
            last = last_in_window(samples, at, window)
            if last is not None:
                key = (labels["namespace"], labels["pod"], labels["id"])
                ratio[key] = max(ratio.get(key, last), last)
    w = "1d" if window == 86400 else "1w"
    out = {}

    def add(name, labels, value):
        key = canonical(name, labels)
        out[key] = out.get(key, 0.0) + value

    pod_dollars = {}
    for gpu, hours in idle.items():
        g = dict(gpu)
        for level, keys in (("namespace", ("namespace",)),
                            ("namespace_job_name", ("namespace", "job_name"))):
            by = {k: g[k] for k in keys if k in g}
            add(f"{level}:gpuwise_gpu_idle_hours:{w}", by, hours)
            if gpu in price:
                add(f"{level}:gpuwise_gpu_idle_dollars:{w}", by, hours * price[gpu])
        if gpu in price and gpu in busy:
            pod = (g["namespace"], g["pod"])
            pod_dollars[pod] = pod_dollars.get(pod, 0.0) + (hours + busy[gpu]) * price[gpu]
    for (ns, pod), dollars in pod_dollars.items():
        add(f"namespace_pod:gpuwise_gpu_dollars:{w}", {"namespace": ns, "pod": pod}, dollars)
    worth = {}
    for (ns, pod, rid), r in ratio.items():
        if (ns, pod) in pod_dollars:
            worth[(ns, pod, rid)] = r * pod_dollars[(ns, pod)]
            add(f"id:gpuwise_recommendation_saving_dollars:{w}", {"id": rid}, worth[(ns, pod, rid)])
    for (ns, pod, rid), value in sorted(worth.items(), key=lambda kv: -kv[1])[:10]:
        add(f"cluster:gpuwise_recommendation_saving_dollars:top10_{w}",
            {"namespace": ns, "pod": pod, "id": rid}, value)
    return out


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "tests/containers/waste_rules_test.yaml"
    failures = checked = 0
    for test in parse_tests(path):
        for e in test["expect"]:
            window = 86400 if e["expr"].endswith("1d") else 604800
            every = figures(test["series"], test["interval"], e["at"], window)
            got = {k: v for k, v in every.items() if k.startswith(e["expr"] + "{")}
            for key in sorted(set(got) | set(e["samples"])):
                want, have = e["samples"].get(key), got.get(key)
                ok = want is not None and have is not None and \
                    abs(want - have) <= 1e-9 * max(abs(want), abs(have), 1e-12)
                verdict = "ok  " if ok else "DIFF"
                print(f"{verdict} t={e['at']}s {key}: file {want}, reference {have}")
                checked += 1
                failures += not ok
    print(f"{checked} samples checked, {failures} differ")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
