// What the studio's layout checks ask of a page, in the page itself: the
// browser test (studio.e2e.mjs, Playwright) and the window test
// (window.e2e.mjs, the Wails window) load this file and axe-core into the
// page and call window.studioPageCheck() at each size.
// width: the document's width (more than the window's: the page scrolls
// sideways); overflowing: text wider than its box where the box shows the
// overflow (an ellipsis is on purpose), boxes (fields and buttons too)
// that leave their panel, and text above the panels that a panel covers; violations: axe-core's serious and critical ones.
window.studioPageCheck = async function studioPageCheck() {
  const overflowing = [];
  for (const el of document.querySelectorAll('main *')) {
    const cs = getComputedStyle(el);
    if (cs.display === 'none' || cs.visibility === 'hidden' || el.closest('[aria-hidden="true"]')) continue;
    const hasText = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    const control = el.matches('select, input, button, textarea');
    if ((!hasText && !control) || el.clientWidth === 0) continue;
    if (hasText && el.scrollWidth > el.clientWidth + 1 && cs.overflowX === 'visible' && cs.textOverflow !== 'ellipsis')
      overflowing.push(`${el.tagName}.${el.className}: "${el.textContent.trim().slice(0, 40)}" ${el.scrollWidth}>${el.clientWidth}`);
    const panel = el.parentElement?.closest('.panel, header');
    if (panel) {
      const r = el.getBoundingClientRect();
      const p = panel.getBoundingClientRect();
      if (r.right > p.right + 1 || r.left < p.left - 1) overflowing.push(`${el.tagName}.${el.className} leaves its panel: "${el.textContent.trim().slice(0, 40)}"`);
      // Below or above a panel that shrank (where nothing between them scrolls or clips).
      let clipped = false;
      for (let a = el.parentElement; a && a !== panel; a = a.parentElement) if (getComputedStyle(a).overflowY !== 'visible') clipped = true;
      if (!clipped && getComputedStyle(panel).overflowY === 'visible' && (r.bottom > p.bottom + 1 || r.top < p.top - 1))
        overflowing.push(`${el.tagName}.${el.className} leaves its panel at the ${r.bottom > p.bottom + 1 ? 'bottom' : 'top'}: "${el.textContent.trim().slice(0, 40)}"`);
    }
  }
  // Panels on top of each other (one that does not fit its place spilling
  // onto the next), as far as they show: a panel's part that a scrolling
  // ancestor clips is not on top of anything.
  const shown = (el) => {
    let r = el.getBoundingClientRect();
    for (let a = el.parentElement; a; a = a.parentElement) {
      if (getComputedStyle(a).overflowY === 'visible') continue;
      const c = a.getBoundingClientRect();
      r = { top: Math.max(r.top, c.top), bottom: Math.min(r.bottom, c.bottom), left: Math.max(r.left, c.left), right: Math.min(r.right, c.right) };
    }
    return r;
  };
  const all = [...document.querySelectorAll('main .panel')].filter((p) => p.getClientRects().length);
  for (const [i, a] of all.entries())
    for (const b of all.slice(i + 1)) {
      if (a.contains(b) || b.contains(a)) continue;
      const ra = shown(a);
      const rb = shown(b);
      if (ra.bottom > rb.top + 1 && ra.top < rb.bottom - 1 && ra.right > rb.left + 1 && ra.left < rb.right - 1)
        overflowing.push(`panels ${a.dataset.region ?? a.className} and ${b.dataset.region ?? b.className} overlap`);
    }
  // Text above the panels (the header, the status line's notices) that the
  // panels cover: a box that shrank below its text. A panel scrolled out of
  // its column covers nothing.
  const panels = [...document.querySelectorAll('main .panel')].map(shown);
  for (const el of document.querySelectorAll('main > :not(.layout) *')) {
    if (![...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())) continue;
    const r = el.getBoundingClientRect();
    if (r.width && panels.some((p) => r.bottom > p.top + 1 && r.top < p.bottom - 1 && r.right > p.left + 1 && r.left < p.right - 1))
      overflowing.push(`${el.tagName}.${el.className} lies under a panel: "${el.textContent.trim().slice(0, 40)}"`);
  }
  const r = await window.axe.run(document, { resultTypes: ['violations'] });
  const violations = r.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
  return { width: document.documentElement.scrollWidth, overflowing, violations };
};
