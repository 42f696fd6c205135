/**
 * Process metrics under the names Prometheus client libraries use (`process_*`), plus the
 * event loop's lag: a timer that should fire every `SAMPLE_MS` records how late it fired, so
 * a blocked loop (a long synchronous step, a GC pause) shows as lag on every scrape after it.
 */
import { readdirSync } from "node:fs";
import { CounterFn, Gauge, Histogram, type Registry } from "./metrics";

const SAMPLE_MS = 250;

export interface ProcessMetrics {
  stop(): void;
}

export function processMetrics(registry: Registry): ProcessMetrics {
  const startSeconds = Math.round(Date.now() / 1000 - process.uptime());
  registry.add(
    new Gauge("process_resident_memory_bytes", "Resident set size of the process", () => process.memoryUsage.rss()),
  );
  registry.add(new Gauge("process_heap_bytes", "JavaScript heap in use", () => process.memoryUsage().heapUsed));
  registry.add(
    new CounterFn("process_cpu_seconds_total", "User and system CPU time of the process", () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1e6;
    }),
  );
  registry.add(
    new Gauge(
      "process_start_time_seconds",
      "Start of the process, in seconds since the Unix epoch",
      () => startSeconds,
    ),
  );
  registry.add(new Gauge("process_open_fds", "Open file descriptors (Linux)", openFds));
  const lag = registry.add(
    new Histogram(
      "gateway_event_loop_lag_seconds",
      `How late a ${SAMPLE_MS} ms timer fired: time the event loop was blocked`,
      [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    ),
  );
  let last = 0;
  registry.add(new Gauge("gateway_event_loop_lag_last_seconds", "The event loop's lag at the last sample", () => last));
  let expected = performance.now() + SAMPLE_MS;
  const timer = setInterval(() => {
    const now = performance.now();
    last = Math.max(0, now - expected) / 1000;
    lag.observe(last);
    expected = now + SAMPLE_MS;
  }, SAMPLE_MS);
  timer.unref?.();
  return { stop: () => clearInterval(timer) };
}

function openFds(): number {
  try {
    return readdirSync("/proc/self/fd").length;
  } catch {
    return 0;
  }
}
