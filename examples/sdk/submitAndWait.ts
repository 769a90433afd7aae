// Submit a gang with the SDK, follow its decisions, then ask why it is where it is.
// Run it while `npm start` runs, with the url that prints:
//   NATS_URL=nats://127.0.0.1:<port> npx tsx examples/sdk/submitAndWait.ts
import { connectClient, isMusterError } from '@muster/client';

const muster = await connectClient(process.env.NATS_URL ?? 'nats://127.0.0.1:4222');
try {
  const jobId = `sdk-demo-${Date.now().toString(36)}`;
  const { inputSeq } = await muster.submit({
    id: jobId,
    identity: { user: 'sdk', queue: 'default', project: 'docs' },
    roles: [{ name: 'worker', count: 2, resources: { cpu: 1000, memoryMb: 2048, gpus: 1 } }],
    placement: { policy: 'pack', gpuLocality: true },
    runtimeMs: 3000,
  });
  console.log(`submitted ${jobId} (MUSTER_IN sequence ${inputSeq})`);

  const decision = await muster.wait(jobId, {
    timeoutMs: 60_000,
    onDecision: (d) => {
      if (d.type === 'GangAborted' && !d.final) console.log(`waiting: ${d.reason.category}: ${d.reason.message}`);
    },
  });
  if (decision.type === 'GangCommitted') {
    for (const a of decision.allocations) console.log(`placed ${a.role} members ${a.members.join(',')} on ${a.node} (GPUs ${a.gpuIds.join(',') || 'none'})`);
  } else {
    console.log(`aborted: ${decision.reason.category}`);
  }
  console.log((await muster.explain(jobId)).text);
} catch (err) {
  if (!isMusterError(err)) throw err;
  console.error(`muster said ${err.code}${err.path === '' ? '' : ` at ${err.path}`}: ${err.message}`);
  process.exitCode = 1;
} finally {
  await muster.disconnect();
}
