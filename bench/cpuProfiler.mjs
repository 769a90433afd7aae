// Preloaded into a spawned service by `BENCH_PROFILE=<dir> npm run bench:service` (through
// NODE_OPTIONS=--import, since --cpu-prof is not allowed there): SIGUSR2 starts V8's sampling
// profiler, the next SIGUSR2 stops it and writes <dir>/<pid>-<n>.cpuprofile (open it in Chrome's
// DevTools or speedscope), so a profile holds only the part of the bench between the two signals;
// <dir>/<pid>-<n>.gc.json beside it sums the garbage collections of that part by kind; with
// MUSTER_HEAP_PROFILE=1, <dir>/<pid>-<n>.heapprofile samples what that part allocated (collected or not).
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { PerformanceObserver, constants } from 'node:perf_hooks';

const dir = process.env.MUSTER_CPU_PROFILE_DIR;
if (dir !== undefined && dir !== '') {
  const session = new Session();
  session.connect();
  let running = false;
  let n = 0;
  const KINDS = { [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor', [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major', [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental', [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb' };
  let gc = {};
  const observer = new PerformanceObserver((list) => {
    if (!running) return;
    for (const entry of list.getEntries()) {
      const kind = KINDS[entry.detail?.kind] ?? 'other';
      const sum = (gc[kind] ??= { count: 0, ms: 0 });
      sum.count++;
      sum.ms += entry.duration;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  const heap = process.env.MUSTER_HEAP_PROFILE === '1';
  session.post('Profiler.enable');
  if (heap) session.post('HeapProfiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: Number(process.env.MUSTER_CPU_PROFILE_INTERVAL_US ?? 200) });
  process.on('SIGUSR2', () => {
    if (!running) {
      running = true;
      gc = {};
      mkdirSync(dir, { recursive: true });
      if (heap) session.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
      session.post('Profiler.start');
      return;
    }
    running = false;
    const at = n;
    if (heap) {
      session.post('HeapProfiler.stopSampling', (err, result) => {
        if (err === null) writeFileSync(join(dir, `${process.pid}-${at}.heapprofile`), JSON.stringify(result.profile));
      });
    }
    session.post('Profiler.stop', (err, result) => {
      if (err !== null) return;
      writeFileSync(join(dir, `${process.pid}-${n}.gc.json`), JSON.stringify(gc));
      writeFileSync(join(dir, `${process.pid}-${n++}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
