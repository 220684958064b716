// HTTP control API for out-of-process use:
//   POST   /_mock/faults    queue a Fault (or an array of them)
//   GET    /_mock/faults    list queued faults
//   DELETE /_mock/faults    reset: clear faults and recorded requests
//   GET    /_mock/requests  recorded requests
//   DELETE /_mock/requests  clear recorded requests
//   POST   /_mock/reset     same as DELETE /_mock/faults
//   GET    /_mock/health    liveness
//   POST   /_mock/metrics   set the load GET /metrics reports ({waiting, kvCache} in vLLM's names), null: none

import { faultProblem, type FaultQueue } from './faults.ts';
import type { Fault, RecordedRequest } from './types.ts';
import { loadProblem, type MockLoad } from './vllm-metrics.ts';

export interface ControlState {
  faults: FaultQueue;
  requests: RecordedRequest[];
  reset: () => void;
  setLoad: (load: MockLoad | null) => void;
}

export interface ControlAnswer {
  status: number;
  body: unknown;
}

export function control(method: string, path: string, rawBody: string, state: ControlState): ControlAnswer {
  switch (`${method} ${path}`) {
    case 'POST /_mock/faults': {
      let parsed: unknown;
      try {
        parsed = JSON.parse(rawBody);
      } catch {
        return { status: 400, body: { error: 'body is not valid JSON' } };
      }
      const list: unknown[] = Array.isArray(parsed) ? parsed : [parsed];
      for (const f of list) {
        const problem = faultProblem(f);
        if (problem) return { status: 400, body: { error: `invalid fault: ${problem}` } };
      }
      for (const f of list) state.faults.add(f as Fault);
      return { status: 201, body: { queued: state.faults.size } };
    }
    case 'GET /_mock/faults':
      return { status: 200, body: state.faults.list() };
    case 'DELETE /_mock/faults':
    case 'POST /_mock/reset':
      state.reset();
      return { status: 200, body: { ok: true } };
    case 'GET /_mock/requests':
      return { status: 200, body: state.requests };
    case 'DELETE /_mock/requests':
      state.requests.length = 0;
      return { status: 200, body: { ok: true } };
    case 'POST /_mock/metrics': {
      let parsed: unknown;
      try {
        parsed = JSON.parse(rawBody);
      } catch {
        return { status: 400, body: { error: 'body is not valid JSON' } };
      }
      const problem = loadProblem(parsed);
      if (problem) return { status: 400, body: { error: `invalid load: ${problem}` } };
      state.setLoad(parsed as MockLoad | null);
      return { status: 200, body: { ok: true } };
    }
    case 'GET /_mock/health':
      return { status: 200, body: { ok: true } };
    default:
      return { status: 404, body: { error: `no control endpoint ${method} ${path}` } };
  }
}
