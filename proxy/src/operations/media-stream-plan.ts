// The image and audio APIs stream typed JSON events (`transcript.text.delta`, `speech.audio.delta`,
// `image_generation.partial_image`, ...). They are relayed one for one, named events keep their
// name, each gains `extra_fields`, and the `usage` on the final event is counted.
import type { GatewayError } from '../unified/errors.ts';
import type { ExtraFields } from '../unified/chat.ts';
import { mediaUsage } from '../unified/media.ts';
import type { StreamPlan } from '../pipeline/stream.ts';

export interface MediaEvent {
  event?: string;
  /** null for a `[DONE]` sentinel, passed on where the upstream sends one. */
  data: Record<string, unknown> | null;
}

export function mediaEventPlan(): StreamPlan<MediaEvent> {
  return {
    translator: {
      push: (ev) => [{ ...(ev.event ? { event: ev.event } : {}), data: ev.data === '[DONE]' ? null : (JSON.parse(ev.data) as Record<string, unknown>) }],
      finish: () => [],
    },
    encode: encodeMediaEvent,
    done: '',
    usage: (e) => mediaUsage(e.data?.usage),
    terminal: (e) => e.data === null || isFinal(e.data.type),
    visible: () => true,
    decorate: (e, extra: ExtraFields) => {
      if (e.data) e.data.extra_fields = extra;
    },
    errorEvent: (err: GatewayError) => `event: error\ndata: ${JSON.stringify(err.toBody())}\n\n`,
  };
}

export function encodeMediaEvent(e: MediaEvent): string {
  const data = e.data === null ? '[DONE]' : JSON.stringify(e.data);
  return `${e.event ? `event: ${e.event}\n` : ''}data: ${data}\n\n`;
}

function isFinal(type: unknown): boolean {
  return typeof type === 'string' && (type.endsWith('.done') || type.endsWith('.completed'));
}
