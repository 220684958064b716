// OpenAI Realtime events to and from Gemini's Live API (BidiGenerateContent), text and audio. Pure:
// a translator holds one session's state and turns each event of one side into the messages of the
// other; gemini-link.ts does the socket work.
//
// How the two protocols meet:
// - Gemini takes its configuration once, in the first message (`setup`); OpenAI sends
//   `session.update` whenever it likes. The setup is sent with the first client event: a
//   `session.update` before anything else configures it (instructions, output modalities, voice);
//   one after that cannot change the provider's session and gets a (non-fatal) error event.
// - OpenAI builds a conversation with `conversation.item.create` and asks with `response.create`;
//   Gemini takes turns in `clientContent` and answers once `turnComplete` is true. Items are held
//   until `response.create` and sent as one clientContent with turnComplete.
// - Audio in: `input_audio_buffer.append` is `realtimeInput.audio` (PCM16, 24 kHz as OpenAI's
//   default format); `commit` ends the stream (`audioStreamEnd`) so Gemini's voice activity
//   detection answers. Audio out: Gemini's 24 kHz PCM16 `inlineData` is OpenAI's output audio delta.
// - A Gemini turn (`serverContent` ... `turnComplete`) is one OpenAI response; usage comes from the
//   last `usageMetadata`.

type Json = Record<string, unknown>;

export interface GeminiSetupDefaults {
  model: string;
}

/** What a client event becomes: messages for Gemini and events answered to the client at once. */
export interface Translated {
  toGemini: Json[];
  toClient: Json[];
}

const NONE: Translated = { toGemini: [], toClient: [] };

/** Client events Gemini's Live API has no counterpart for: answered with a non-fatal error event. */
const UNSUPPORTED = new Set(['conversation.item.delete', 'conversation.item.truncate', 'conversation.item.retrieve', 'output_audio_buffer.clear', 'transcription_session.update']);

let seq = 0;
const newId = (prefix: string): string => `${prefix}_bf${Date.now().toString(36)}${(++seq).toString(36)}`;

function textOf(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .map((c) => (typeof c === 'object' && c !== null && typeof (c as Json).text === 'string' ? ((c as Json).text as string) : typeof (c as Json)?.transcript === 'string' ? ((c as Json).transcript as string) : ''))
    .filter(Boolean)
    .join(' ');
}

export class GeminiTranslator {
  readonly #model: string;
  readonly #sessionId = newId('sess');
  #session: Json;
  #setupSent = false;
  #pendingTurns: Json[] = [];
  // The response being produced (Gemini's current turn).
  #responseId: string | undefined;
  #itemId: string | undefined;
  #text = '';
  #transcript = '';
  #audio = false;
  #usage: Json | undefined;
  #calls: Json[] = [];

  constructor(defaults: GeminiSetupDefaults) {
    this.#model = defaults.model;
    this.#session = { id: this.#sessionId, object: 'realtime.session', type: 'realtime', model: defaults.model, output_modalities: ['audio'], instructions: '', audio: { input: { format: { type: 'audio/pcm', rate: 24000 } }, output: { format: { type: 'audio/pcm', rate: 24000 } } } };
  }

  /** The first event the client gets, as OpenAI sends it on connect. */
  sessionCreated(): Json {
    return { type: 'session.created', event_id: newId('event'), session: this.#session };
  }

  #textOnly(): boolean {
    const m = this.#session.output_modalities;
    return Array.isArray(m) && !m.includes('audio');
  }

  /** Gemini's setup message from the session as configured so far. */
  #setup(): Json {
    const s = this.#session;
    const generationConfig: Json = { responseModalities: [this.#textOnly() ? 'TEXT' : 'AUDIO'] };
    const voice = (s.audio as { output?: { voice?: unknown } } | undefined)?.output?.voice ?? s.voice;
    if (typeof voice === 'string' && voice) generationConfig.speechConfig = { voiceConfig: { prebuiltVoiceConfig: { voiceName: voice } } };
    if (typeof s.temperature === 'number') generationConfig.temperature = s.temperature;
    const setup: Json = { model: `models/${this.#model}`, generationConfig };
    if (typeof s.instructions === 'string' && s.instructions) setup.systemInstruction = { parts: [{ text: s.instructions }] };
    if (!this.#textOnly()) setup.outputAudioTranscription = {};
    setup.inputAudioTranscription = {};
    const tools = Array.isArray(s.tools) ? (s.tools as Json[]).filter((t) => t.type === 'function') : [];
    if (tools.length) setup.tools = [{ functionDeclarations: tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })) }];
    return { setup };
  }

  #withSetup(out: Translated): Translated {
    if (this.#setupSent) return out;
    this.#setupSent = true;
    return { toGemini: [this.#setup(), ...out.toGemini], toClient: out.toClient };
  }

  /** One checked client event (OpenAI's shape). */
  fromClient(event: Json): Translated {
    const type = event.type as string;
    if (type === 'session.update') {
      const update = (event.session ?? {}) as Json;
      if (this.#setupSent) {
        return { toGemini: [], toClient: [this.#error('unsupported_for_provider', "Gemini's Live API takes its configuration once, at the start: send session.update before any other event", event)] };
      }
      this.#session = { ...this.#session, ...update, id: this.#sessionId, object: 'realtime.session' };
      return this.#withSetup({ toGemini: [], toClient: [{ type: 'session.updated', event_id: newId('event'), session: this.#session }] });
    }
    if (UNSUPPORTED.has(type)) return this.#withSetup({ toGemini: [], toClient: [this.#error('unsupported_for_provider', `${type} has no counterpart in Gemini's Live API: the event was not applied`, event)] });
    switch (type) {
      case 'conversation.item.create': {
        const item = (event.item ?? {}) as Json;
        const id = typeof item.id === 'string' ? item.id : newId('item');
        const added = { ...item, id, object: 'realtime.item', status: 'completed' };
        const echo = [
          { type: 'conversation.item.added', event_id: newId('event'), previous_item_id: null, item: added },
          { type: 'conversation.item.done', event_id: newId('event'), previous_item_id: null, item: added },
        ];
        if (item.type === 'function_call_output') {
          const response = { id: item.call_id, name: item.name, response: { output: item.output } };
          return this.#withSetup({ toGemini: [{ toolResponse: { functionResponses: [response] } }], toClient: echo });
        }
        const text = textOf(item.content);
        if (text) this.#pendingTurns.push({ role: item.role === 'assistant' ? 'model' : 'user', parts: [{ text }] });
        return this.#withSetup({ toGemini: [], toClient: echo });
      }
      case 'response.create': {
        const turns = this.#pendingTurns;
        this.#pendingTurns = [];
        this.#startResponse();
        return this.#withSetup({ toGemini: [{ clientContent: { turns, turnComplete: true } }], toClient: [this.#responseCreated()] });
      }
      case 'input_audio_buffer.append':
        return this.#withSetup({ toGemini: [{ realtimeInput: { audio: { data: event.audio, mimeType: 'audio/pcm;rate=24000' } } }], toClient: [] });
      case 'input_audio_buffer.commit':
        return this.#withSetup({ toGemini: [{ realtimeInput: { audioStreamEnd: true } }], toClient: [{ type: 'input_audio_buffer.committed', event_id: newId('event'), previous_item_id: null, item_id: newId('item') }] });
      case 'input_audio_buffer.clear':
        return this.#withSetup({ toGemini: [], toClient: [{ type: 'input_audio_buffer.cleared', event_id: newId('event') }] });
      case 'response.cancel':
        // Gemini stops a turn when new input arrives; there is no explicit cancel to send.
        return this.#withSetup(NONE);
      default:
        return this.#withSetup(NONE);
    }
  }

  #error(code: string, message: string, event: Json): Json {
    return { type: 'error', event_id: newId('event'), error: { type: 'invalid_request_error', code, message, param: null, event_id: typeof event.event_id === 'string' ? event.event_id : null } };
  }

  #startResponse(): void {
    this.#responseId = newId('resp');
    this.#itemId = newId('item');
    this.#text = '';
    this.#transcript = '';
    this.#audio = false;
    this.#calls = [];
  }

  #responseCreated(): Json {
    return { type: 'response.created', event_id: newId('event'), response: { id: this.#responseId, object: 'realtime.response', status: 'in_progress', output: [] } };
  }

  #part(): Json {
    return { response_id: this.#responseId, item_id: this.#itemId, output_index: 0, content_index: 0 };
  }

  /** One Gemini message: the OpenAI events it stands for. */
  fromGemini(message: Json): Json[] {
    const out: Json[] = [];
    if (message.usageMetadata) this.#usage = message.usageMetadata as Json;
    const content = message.serverContent as Json | undefined;
    const toolCall = message.toolCall as { functionCalls?: Json[] } | undefined;
    if ((content?.modelTurn || content?.outputTranscription || toolCall) && this.#responseId === undefined) {
      // A turn Gemini started itself (voice activity detection on streamed audio).
      this.#startResponse();
      out.push(this.#responseCreated());
    }
    if (content?.modelTurn && this.#text === '' && this.#transcript === '' && !this.#audio) {
      out.push({ type: 'response.output_item.added', event_id: newId('event'), response_id: this.#responseId, output_index: 0, item: { id: this.#itemId, object: 'realtime.item', type: 'message', role: 'assistant', status: 'in_progress', content: [] } });
    }
    const parts = ((content?.modelTurn as { parts?: Json[] } | undefined)?.parts ?? []) as Json[];
    for (const p of parts) {
      if (typeof p.text === 'string') {
        this.#text += p.text;
        out.push({ type: 'response.output_text.delta', event_id: newId('event'), ...this.#part(), delta: p.text });
      }
      const inline = p.inlineData as { data?: unknown; mimeType?: unknown } | undefined;
      if (inline && typeof inline.data === 'string' && String(inline.mimeType ?? '').startsWith('audio/')) {
        this.#audio = true;
        out.push({ type: 'response.output_audio.delta', event_id: newId('event'), ...this.#part(), delta: inline.data });
      }
    }
    const said = (content?.outputTranscription as { text?: unknown } | undefined)?.text;
    if (typeof said === 'string' && said) {
      this.#transcript += said;
      out.push({ type: 'response.output_audio_transcript.delta', event_id: newId('event'), ...this.#part(), delta: said });
    }
    const heard = (content?.inputTranscription as { text?: unknown } | undefined)?.text;
    if (typeof heard === 'string' && heard) out.push({ type: 'conversation.item.input_audio_transcription.delta', event_id: newId('event'), item_id: this.#itemId ?? newId('item'), content_index: 0, delta: heard });
    for (const call of toolCall?.functionCalls ?? []) {
      const item = { id: newId('item'), object: 'realtime.item', type: 'function_call', status: 'completed', call_id: call.id ?? newId('call'), name: call.name, arguments: JSON.stringify(call.args ?? {}) };
      this.#calls.push(item);
      out.push({ type: 'response.output_item.added', event_id: newId('event'), response_id: this.#responseId, output_index: this.#calls.length, item });
      out.push({ type: 'response.function_call_arguments.done', event_id: newId('event'), response_id: this.#responseId, item_id: item.id, output_index: this.#calls.length, call_id: item.call_id, name: item.name, arguments: item.arguments });
      out.push({ type: 'response.output_item.done', event_id: newId('event'), response_id: this.#responseId, output_index: this.#calls.length, item });
    }
    // Gemini waits for the tool's answer before it goes on: the response is done here.
    if (toolCall?.functionCalls?.length) out.push(...this.#done('completed'));
    else if (content?.turnComplete) out.push(...this.#done('completed'));
    else if (content?.interrupted) out.push(...this.#done('cancelled'));
    return out;
  }

  #done(status: string): Json[] {
    if (this.#responseId === undefined) return [];
    const out: Json[] = [];
    const content: Json[] = [];
    if (this.#text) {
      out.push({ type: 'response.output_text.done', event_id: newId('event'), ...this.#part(), text: this.#text });
      content.push({ type: 'output_text', text: this.#text });
    }
    if (this.#audio || this.#transcript) {
      if (this.#audio) out.push({ type: 'response.output_audio.done', event_id: newId('event'), ...this.#part() });
      out.push({ type: 'response.output_audio_transcript.done', event_id: newId('event'), ...this.#part(), transcript: this.#transcript });
      content.push({ type: 'output_audio', transcript: this.#transcript });
    }
    const output: Json[] = [];
    if (content.length) {
      const item = { id: this.#itemId, object: 'realtime.item', type: 'message', role: 'assistant', status: status === 'completed' ? 'completed' : 'incomplete', content };
      out.push({ type: 'response.output_item.done', event_id: newId('event'), response_id: this.#responseId, output_index: 0, item });
      output.push(item);
    }
    output.push(...this.#calls);
    const u = this.#usage ?? {};
    const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
    const input = n(u.promptTokenCount);
    const outputTokens = n(u.responseTokenCount) || n(u.candidatesTokenCount);
    const usage = { total_tokens: n(u.totalTokenCount) || input + outputTokens, input_tokens: input, output_tokens: outputTokens, input_token_details: { cached_tokens: n(u.cachedContentTokenCount) } };
    out.push({ type: 'response.done', event_id: newId('event'), response: { id: this.#responseId, object: 'realtime.response', status, output, usage } });
    this.#responseId = undefined;
    this.#usage = undefined;
    return out;
  }
}
