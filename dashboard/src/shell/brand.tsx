// The gateway's mark: inline SVG (no remote image, the gateway may run air-gapped).
export function BrandMark() {
  return (
    <svg class="brand-mark" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
      <path d="M2 17c4-8 16-8 20 0" fill="none" stroke="#8fb3ff" stroke-width="2.5" stroke-linecap="round" />
      <path d="M6 17v-4M12 17v-6M18 17v-4" stroke="#f5f7fa" stroke-width="2" stroke-linecap="round" />
      <path d="M1 19h22" stroke="#f5f7fa" stroke-width="2" stroke-linecap="round" />
    </svg>
  );
}
