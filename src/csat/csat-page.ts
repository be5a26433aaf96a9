import { createHash } from 'node:crypto';
import { CSAT_OPEN_DAYS, type SurveyView } from './csat.service.js';

/**
 * The rating page (docs/reports.md, "CSAT"): server-rendered, no script at all, a plain form
 * that posts to its own URL, so it works in any browser and with JavaScript off. Its one style
 * sheet is inline and allowed by its hash in the page's CSP, which allows nothing else.
 */

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The choices, 1 to 5, each with words (a screen reader reads the label, not a colour or a face). */
export const CHOICES = ['Very dissatisfied', 'Dissatisfied', 'Neutral', 'Satisfied', 'Very satisfied'] as const;

const DEFAULT_COLOUR = '#2348c9';

function styles(colour: string): string {
  return `
:root { --accent: ${colour}; }
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; background: #f5f6f8; color: #16181d; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { max-width: 560px; margin: 32px auto; }
@media (max-width: 600px) { main { margin: 0; border-radius: 0; } }
.sheet { background: #fff; border-top: 6px solid var(--accent); border-radius: 12px; box-shadow: 0 2px 10px rgba(0,0,0,.06); }
header { padding: 20px 24px 4px; }
h1 { margin: 0; font-size: 20px; }
.card { padding: 8px 24px 24px; }
fieldset { border: 0; margin: 0; padding: 0; }
legend { font-size: 17px; font-weight: 600; margin: 12px 0; padding: 0; }
.choices { display: grid; gap: 8px; }
.choice { display: flex; align-items: center; gap: 12px; padding: 10px 14px; border: 1px solid #8a909c; border-radius: 10px; cursor: pointer; }
.choice input { width: 20px; height: 20px; margin: 0; accent-color: var(--accent); }
.choice:has(input:checked) { border-color: var(--accent); box-shadow: inset 0 0 0 2px var(--accent); }
.n { font-weight: 700; min-width: 1ch; }
label.comment { display: block; margin: 20px 0 4px; font-weight: 600; }
textarea { width: 100%; min-height: 96px; padding: 10px; font: inherit; color: inherit; border: 1px solid #8a909c; border-radius: 10px; }
button { margin-top: 16px; padding: 12px 22px; border: 0; border-radius: 10px; background: var(--accent); color: #fff; font: inherit; font-weight: 600; cursor: pointer; }
:focus-visible { outline: 3px solid #f0a500; outline-offset: 2px; }
.note { margin: 16px 0 0; padding: 10px 14px; border-radius: 10px; background: #e7f6ec; color: #14532d; }
.small { color: #4a505c; font-size: 14px; margin: 16px 0 0; }
`;
}

/** The accent, when dark enough for white text on it; else the default. */
function accentOf(colour: string | null): string {
  if (!colour || !/^#[0-9a-f]{6}$/i.test(colour)) return DEFAULT_COLOUR;
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = Number.parseInt(colour.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  const luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  // White text needs 4.5:1 (WCAG AA): (1 + 0.05) / (L + 0.05) ≥ 4.5.
  return 1.05 / (luminance + 0.05) >= 4.5 ? colour.toLowerCase() : DEFAULT_COLOUR;
}

export interface RenderedPage {
  html: string;
  csp: string;
}

function page(title: string, colour: string | null, body: string): RenderedPage {
  const css = styles(accentOf(colour));
  const hash = createHash('sha256').update(css).digest('base64');
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>${css}</style>
</head>
<body>
<main class="sheet">
${body}
</main>
</body>
</html>
`;
  const csp = ["default-src 'none'", `style-src 'sha256-${hash}'`, "form-action 'self'", "base-uri 'none'", "frame-ancestors 'none'"].join(
    '; ',
  );
  return { html, csp };
}

const dateOf = (d: Date) => d.toISOString().slice(0, 16).replace('T', ' ');

/** The survey's page: the question, five choices and a comment; after an answer, it says so. */
export function surveyPage(view: SurveyView, options: { justRated?: boolean } = {}): RenderedPage {
  const heading = `<header><h1>${escapeHtml(view.workspaceName)}</h1></header>`;
  if (view.closed) {
    return page(
      'Survey closed',
      view.colour,
      `${heading}<div class="card"><p>This survey has closed: a rating can be given or changed for ${CSAT_OPEN_DAYS} days after it was sent.</p>${
        view.rating === null ? '' : `<p>Your rating was ${view.rating} of 5. Thank you.</p>`
      }</div>`,
    );
  }
  const choices = CHOICES.map((words, i) => {
    const n = i + 1;
    const checked = view.rating === n ? ' checked' : '';
    return `<label class="choice"><input type="radio" name="rating" value="${n}" required${checked}><span class="n">${n}</span> <span>${words}</span></label>`;
  }).join('\n');
  const thanks = options.justRated
    ? `<p class="note" role="status">Thank you! Your rating of ${view.rating} of 5 is saved.</p>`
    : view.rating !== null
      ? `<p class="note">You rated this ${view.rating} of 5. You may change it below.</p>`
      : '';
  return page(
    'How did we do?',
    view.colour,
    `${heading}<div class="card">
${thanks}
<form method="post">
<fieldset>
<legend>${escapeHtml(view.question)}</legend>
<div class="choices">
${choices}
</div>
</fieldset>
<label class="comment" for="comment">Anything to add? (optional)</label>
<textarea id="comment" name="comment" maxlength="2000">${escapeHtml(view.comment ?? '')}</textarea>
<button type="submit">${view.rating === null ? 'Send rating' : 'Update rating'}</button>
</form>
<p class="small">You can change your answer until ${dateOf(view.closesAt)} UTC.</p>
</div>`,
  );
}

/** The page for a link that names no survey. */
export function unknownSurveyPage(): RenderedPage {
  return page(
    'Survey not found',
    null,
    `<header><h1>Survey not found</h1></header><div class="card"><p>This link does not lead to a survey. Please check that it was copied whole.</p></div>`,
  );
}
