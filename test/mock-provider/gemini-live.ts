// Gemini's Live API (BidiGenerateContent over WebSocket) at
// /gemini/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent
// (`x-goog-api-key` header or `?key=`). The first message must be `setup` (else close 1007, as
// Google does); it is answered `setupComplete`. A `clientContent` with `turnComplete` is answered
// `Mock reply to: <text of its last user turn>` (`realtimeInput` audio then `audioStreamEnd`:
// `Mock reply to: [audio <ms> ms]`): per word, a text part (TEXT modality) or 0.1 s of 24 kHz PCM16
// `inlineData` plus an `outputTranscription` (AUDIO); then `usageMetadata` (prompt tokens: the
// words, or one per 100 ms of audio; response tokens: the reply's words) with `turnComplete`.
// Messages are sent as binary frames, as Google's server does.
import type { WebSocket } from 'ws';
import type { RealtimeRecord } from './realtime.ts';
import { keep } from './recorded.ts';

export const GEMINI_LIVE_PATH = '/gemini/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent';

const words = (text: string): number => text.split(/\s+/).filter(Boolean).length;

interface Setup {
  model?: string;
  generationConfig?: { responseModalities?: string[] };
  outputAudioTranscription?: object;
}

export function runGeminiLive(ws: WebSocket, record: RealtimeRecord, maxRecorded = Infinity): void {
  let setup: Setup | undefined;
  let audioBytes = 0;
  let audioRate = 24000;
  const send = (m: object) => {
    if (ws.readyState === 1) ws.send(Buffer.from(JSON.stringify(m)), { binary: true });
  };
  ws.on('message', (data: Buffer) => {
    let m: Record<string, unknown>;
    try {
      m = JSON.parse(data.toString()) as Record<string, unknown>;
    } catch {
      ws.close(1007, 'Request contains an invalid argument.');
      return;
    }
    keep(record.events, { type: Object.keys(m)[0] ?? 'empty', ...m }, maxRecorded);
    if (!setup) {
      if (!m.setup) {
        ws.close(1007, 'Request contains an invalid argument: setup must be the first message.');
        return;
      }
      const asked = m.setup as Setup;
      setup = asked;
      if (!String(asked.model ?? '').startsWith('models/')) {
        ws.close(1008, `models/${String(asked.model)} is not found for API version v1beta, or is not supported for bidiGenerateContent.`);
        return;
      }
      send({ setupComplete: {} });
      return;
    }
    if (m.clientContent) {
      const c = m.clientContent as { turns?: { role?: string; parts?: { text?: string }[] }[]; turnComplete?: boolean };
      const user = (c.turns ?? []).filter((t) => t.role === 'user').at(-1);
      const text = (user?.parts ?? []).map((p) => p.text ?? '').join(' ').trim();
      if (c.turnComplete) answer(text, words(text));
      return;
    }
    if (m.realtimeInput) {
      const r = m.realtimeInput as { audio?: { data?: string; mimeType?: string }; audioStreamEnd?: boolean };
      if (r.audio?.data) {
        audioBytes += Buffer.from(r.audio.data, 'base64').length;
        const rate = /rate=(\d+)/.exec(r.audio.mimeType ?? '');
        if (rate) audioRate = Number(rate[1]);
      }
      if (r.audioStreamEnd) {
        const ms = Math.round((audioBytes / (audioRate * 2)) * 1000);
        audioBytes = 0;
        answer(`[audio ${ms} ms]`, Math.ceil(ms / 100));
      }
      return;
    }
    if (m.toolResponse) return;
    ws.close(1007, 'Request contains an invalid argument.');
  });

  function answer(prompt: string, promptTokens: number): void {
    const reply = `Mock reply to: ${prompt}`;
    const text = (setup?.generationConfig?.responseModalities ?? ['AUDIO']).includes('TEXT');
    for (const w of reply.split(' ')) {
      if (text) {
        send({ serverContent: { modelTurn: { parts: [{ text: `${w} ` }] } } });
      } else {
        send({ serverContent: { modelTurn: { parts: [{ inlineData: { mimeType: 'audio/pcm;rate=24000', data: Buffer.alloc(4800, 2).toString('base64') } }] } } });
        if (setup?.outputAudioTranscription) send({ serverContent: { outputTranscription: { text: `${w} ` } } });
      }
    }
    const responseTokens = words(reply);
    send({ serverContent: { generationComplete: true } });
    send({ serverContent: { turnComplete: true }, usageMetadata: { promptTokenCount: promptTokens, responseTokenCount: responseTokens, totalTokenCount: promptTokens + responseTokens } });
  }
}
