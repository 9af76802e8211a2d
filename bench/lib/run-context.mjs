/**
 * What every scenario works with: the clients of the running stack, the buyer factory, the load
 * runner and CPU sampler, and the results with their checks.
 */
import { adminSales, httpClient } from './api-client.mjs';
import { buyerFactory } from './buyers.mjs';
import { loadRunner } from './load-run.mjs';
import { appInfo, machineInfo } from './report/run-info.mjs';
import { cpuSampler } from './sampling.mjs';
import { RUN_ID, SETTINGS, log } from './settings.mjs';
import { state } from './stack.mjs';

/** Call once the stack runs (startStack's answer): it signs in as the admin. */
export async function createRunContext(stack) {
  const http = httpClient(stack.baseUrl);
  const cpu = cpuSampler(state.privateRedis?.pid);
  const results = {
    runId: RUN_ID,
    startedAt: new Date().toISOString(),
    machine: machineInfo(),
    app: appInfo(),
    settings: { ...SETTINGS },
    scenarios: [],
    checks: [],
  };
  /** A check sets the exit code (unlike a target): a failed one means the run is not valid. */
  const check = (name, pass, detail) => {
    results.checks.push({ name, pass, detail });
    if (!pass) log(`CHECK FAILED: ${name} (${detail})`);
  };
  const answeredAsExpected = (name, run) =>
    check(name, run.errors === 0 && run.timeouts === 0, `${run.errors} errors, ${run.timeouts} timeouts`);
  return {
    ...stack,
    http,
    sales: await adminSales(http),
    buyers: buyerFactory(),
    cpu,
    load: loadRunner({ cpu, baseUrl: stack.baseUrl, ceilingUrl: stack.ceilingUrl }),
    results,
    check,
    answeredAsExpected,
  };
}
