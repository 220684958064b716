// The APIError an official `openai` SDK call rejects with, for tests that expect a refusal.
import assert from 'node:assert/strict';
import OpenAI from 'openai';

export async function errorOf(p: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await p;
  } catch (err) {
    if (err instanceof OpenAI.APIError) return err;
    throw err;
  }
  assert.fail('the call succeeded');
}
