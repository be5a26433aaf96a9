import QRCode from 'qrcode';

/**
 * A QR code drawn here, in the browser, as one SVG path: the secret it carries never leaves
 * the page for a third-party image service, and no inline style or data: URL is needed.
 */
export function QrCode({ text, label }: { text: string; label: string }) {
  const { size, data } = QRCode.create(text, { errorCorrectionLevel: 'M' }).modules;
  let d = '';
  for (let y = 0; y < size; y++) for (let x = 0; x < size; x++) if (data[y * size + x]) d += `M${x + 4} ${y + 4}h1v1h-1z`;
  const box = size + 8; // a quiet zone of 4 modules on each side, as scanners expect
  return (
    <svg
      class="qr"
      role="img"
      aria-label={label}
      viewBox={`0 0 ${box} ${box}`}
      width={box * 5}
      height={box * 5}
      shape-rendering="crispEdges"
    >
      <rect width={box} height={box} fill="#fff" />
      <path d={d} fill="#000" />
    </svg>
  );
}
