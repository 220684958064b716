// The skills repository's settings from the live configuration (the `skills` section), read on each
// request so a config change applies to the next one.
import type { GatewayConfig } from '../schema/gateway.ts';
import { DEFAULT_LIMITS, type SkillLimits } from './files.ts';

export const DEFAULT_MARKETPLACE = 'skybridge-skills';

export interface SkillsSettings {
  serving: 'public' | 'virtual_key';
  marketplace: string;
  owner: string;
  limits: SkillLimits;
}

export function skillsSettings(config: GatewayConfig): SkillsSettings {
  const s = config.skills;
  return {
    serving: s?.serving ?? 'public',
    marketplace: s?.marketplace_name ?? DEFAULT_MARKETPLACE,
    owner: s?.owner ?? 'Skybridge',
    limits: {
      maxFiles: s?.max_files ?? DEFAULT_LIMITS.maxFiles,
      maxFileBytes: s?.max_file_size_kb !== undefined ? s.max_file_size_kb * 1024 : DEFAULT_LIMITS.maxFileBytes,
      maxTotalBytes: s?.max_total_size_kb !== undefined ? s.max_total_size_kb * 1024 : DEFAULT_LIMITS.maxTotalBytes,
    },
  };
}
