// Anthropic and Bedrock Converse both require user/assistant alternation: same-role neighbours
// (a run of tool results included) merge into one message.
export function alternatingTurns<B>(): {
  messages: { role: 'user' | 'assistant'; content: B[] }[];
  push(role: 'user' | 'assistant', blocks: B[]): void;
} {
  const messages: { role: 'user' | 'assistant'; content: B[] }[] = [];
  return {
    messages,
    push(role, blocks) {
      if (blocks.length === 0) return;
      const last = messages.at(-1);
      if (last && last.role === role) last.content.push(...blocks);
      else messages.push({ role, content: blocks });
    },
  };
}
