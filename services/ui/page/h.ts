// A tiny element builder for the page: no framework, no external code.

/** Attributes of an element: set as attributes, but `style` (`width:40%;…`), set as style properties. */
export type Attrs = Record<string, string | number | boolean | null | undefined>;

/** Makes an element with attributes (null, undefined and false are left out) and children. */
export function h(tag: string, attrs: Attrs = {}, ...children: (Node | string | null | undefined)[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    // the page's CSP forbids style attributes; properties set through the CSSOM are allowed
    if (name === 'style') {
      for (const decl of String(value).split(';')) {
        const at = decl.indexOf(':');
        if (at > 0) el.style.setProperty(decl.slice(0, at).trim(), decl.slice(at + 1).trim());
      }
      continue;
    }
    el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) if (child !== null && child !== undefined) el.append(child);
  return el;
}

/** Replaces the children of the element with id `id`. */
export function fill(id: string, ...children: (Node | string)[]): void {
  const el = document.getElementById(id);
  if (el !== null) el.replaceChildren(...children);
}

/** A stamped time as the local wall clock (`14:03:07`). */
export function clock(at: number): string {
  return new Date(at).toLocaleTimeString([], { hour12: false });
}
