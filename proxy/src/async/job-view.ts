// A job as its submitter sees it (the reference's AsyncJobResponse): the submit's 202 and every poll.
import type { Job } from './job-store.ts';

export const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

export function jobView(job: Job): Record<string, unknown> {
  const finished = job.status === 'completed' || job.status === 'failed';
  return {
    id: job.id,
    status: job.status,
    created_at: iso(job.created_at),
    expires_at: iso(job.expires_at),
    ...(job.request_id !== undefined && { request_id: job.request_id }),
    ...(finished && {
      completed_at: iso(job.completed_at),
      status_code: job.status_code,
      ...(job.result !== undefined && { result: JSON.parse(job.result) as unknown }),
      ...(job.error !== undefined && { error: JSON.parse(job.error) as unknown }),
    }),
  };
}
