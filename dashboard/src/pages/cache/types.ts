// Shapes of /api/plugins and /api/cache/stats as the Plugins & cache page reads them.

export interface PluginView {
  name: string;
  enabled: boolean;
  config?: Record<string, unknown>;
  placement?: string;
  order?: number;
  managed_by?: string;
  source?: string;
  status: { name: string; status: 'active' | 'disabled' | 'error'; logs: string[] };
}

export interface CacheStats {
  store: { type: string | null; enabled: boolean; open: boolean };
  problem?: string;
  namespaces: string[];
  hits: { direct: number; semantic: number; total: number };
  misses: { direct: number; semantic: number; total: number };
  hit_rate: number | null;
  bypassed: Record<string, number>;
  writes: number;
  store_errors: Record<string, number>;
}

export const SEMANTIC_CACHE = 'semantic_cache';
