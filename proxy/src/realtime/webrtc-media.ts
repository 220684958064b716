// A call's audio, relayed between the legs as RTP: each packet keeps its Opus payload, sequence
// number and timestamp, and gets the outgoing leg's payload type and SSRC (retag). RTCP stays on
// its own leg (each peer connection reports for itself). Counted both ways: packets and seconds for
// the session's log record, seconds for the turns (audio out, time to first audio), and each packet
// keeps the session from idling.
import type { Metrics } from '../metrics/metrics.ts';
import type { RealtimeSession } from './session.ts';
import { isRtp, MediaCount, retag } from './sdp.ts';
import type { Leg } from './webrtc-peer.ts';

export interface MediaRelay {
  /** The session once it runs: packets from then on count for its turns. */
  attach(session: RealtimeSession): void;
  /** What the session's log record keeps of the media. */
  metadata(): Record<string, string>;
}

const seconds = (s: number): string => (Math.round(s * 1000) / 1000).toString();

export function relayMedia(client: Leg, provider: Leg, payloadTypes: { client: number; provider: number }, metrics: Metrics, providerName: string): MediaRelay {
  const fromClient = new MediaCount();
  const toClient = new MediaCount();
  const inCount = metrics.realtimeMediaPackets.labels({ direction: 'client', provider: providerName });
  const outCount = metrics.realtimeMediaPackets.labels({ direction: 'server', provider: providerName });
  let session: RealtimeSession | undefined;
  client.track?.onMessage((packet) => {
    if (!isRtp(packet)) return;
    const s = fromClient.add(packet);
    inCount.inc();
    session?.touch();
    session?.tracker.mediaIn(s);
    provider.sendMedia(retag(packet, payloadTypes.provider, provider.ssrc));
  });
  provider.track?.onMessage((packet) => {
    if (!isRtp(packet)) return;
    const s = toClient.add(packet);
    outCount.inc();
    session?.touch();
    session?.tracker.mediaOut(s, performance.now());
    client.sendMedia(retag(packet, payloadTypes.client, client.ssrc));
  });
  return {
    attach: (s) => void (session = s),
    metadata: () => ({
      transport: 'webrtc',
      rtp_packets_in: String(fromClient.packets),
      rtp_packets_out: String(toClient.packets),
      rtp_audio_in_seconds: seconds(fromClient.seconds),
      rtp_audio_out_seconds: seconds(toClient.seconds),
    }),
  };
}
