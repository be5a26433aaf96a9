// Loaded into a service process with BENCH_NODE_FLAGS="--import ./scripts/bench/heap-sample.mjs"
// (HEAP_SAMPLE_DIR names where, default /tmp/inbox-heap): samples what the process allocates,
// objects the garbage collector already took included, and writes it as PID.heapprofile when
// the process exits. Unlike a CPU profile, what a delivery allocates does not change with the
// machine's load, so a figure taken on a busy machine compares with one taken on an idle one.
// `node --import tsx scripts/bench/heap-profile.ts FILE [--per N]` reads it.
import { mkdirSync, writeFileSync } from 'node:fs';
import inspector from 'node:inspector';
import path from 'node:path';

const dir = process.env.HEAP_SAMPLE_DIR ?? '/tmp/inbox-heap';
const session = new inspector.Session();
session.connect();
session.post('HeapProfiler.enable');
session.post('HeapProfiler.startSampling', {
  samplingInterval: 4096,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: true,
});

let written = false;
function write() {
  if (written) return;
  written = true;
  // The inspector answers synchronously inside post on the process's own session.
  session.post('HeapProfiler.stopSampling', (err, result) => {
    if (err) return;
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `${process.pid}.heapprofile`), JSON.stringify(result.profile));
  });
}
process.on('exit', write);
for (const signal of ['SIGTERM', 'SIGINT']) process.prependListener(signal, write);
