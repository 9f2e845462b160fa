// Words a person uses (issue 38): every text the window shows is read here, component by
// component and in the label modules, for internal ids and raw machine values. A text node
// that prints `{x.id}`, `{x.routeId}`, `{error.code}` or a bare enum (`{route.state}`), or a
// sentence built as "item ${id}", fails; ids belong in attributes (data-*, keys), and enums
// reach the owner through lib/labels.ts.
import { describe, expect, test } from "vitest";

/** Every .svelte and .ts file the app is built from, by path under src/ (no tests, no
 * generated types), as text. */
const SOURCES: Record<string, string> = Object.fromEntries(
  Object.entries(
    import.meta.glob<string>(["../**/*.svelte", "../**/*.ts", "!../**/*.test.ts", "!../lib/generated/**", "!../test/**"], {
      query: "?raw",
      import: "default",
      eager: true,
    }),
  ).map(([path, text]) => [path.replace(/^\.\//, "lib/").replace(/^\.\.\//, ""), text]),
);

/** The markup of a component: no script, no style, no tags (so no attributes). */
export function textOfMarkup(svelte: string): string {
  const markup = svelte
    .replace(/<script[\s\S]*?<\/script>/g, "")
    .replace(/<style[\s\S]*?<\/style>/g, "")
    .replace(/<!--[\s\S]*?-->/g, "");
  let text = "";
  let depth = 0; // braces inside a tag: `>` in `onclick={() => a > b}` does not end it
  let quote = "";
  let inTag = false;
  for (let i = 0; i < markup.length; i++) {
    const c = markup[i];
    if (!inTag) {
      if (c === "<" && /[A-Za-z/]/.test(markup[i + 1] ?? "")) {
        inTag = true;
        text += " ";
      } else {
        text += c;
      }
      continue;
    }
    if (quote) {
      if (c === quote) quote = "";
    } else if (c === '"' || c === "'" || c === "`") {
      quote = c;
    } else if (c === "{") {
      depth++;
    } else if (c === "}") {
      depth--;
    } else if (c === ">" && depth === 0) {
      inTag = false;
    }
  }
  return text;
}

/** Interpolations in text that print an id, an error code or an enum as it is. */
export function rawValuesShown(text: string): string[] {
  const shown = [...text.matchAll(/(?<!\$)\{([^{}#/:@][^{}]*)\}/g)].map((m) => (m[1] ?? "").trim());
  return shown.filter((expr) => /^[\w$.?[\]]+\.(id|\w+Id|code|state|kind|version|digest)$/.test(expr));
}

/** Sentences built around an id: "item ${id}", "#${n}", "decision ${d.id}". */
export function idsInSentences(code: string): string[] {
  const templates = [...code.matchAll(/`([^`]*)`/g)].map((m) => m[1] ?? "");
  return templates.filter((t) =>
    /\b(item|decision|draft|route|version)\s+#?\$\{[^}]*\}|#\$\{|\$\{[^}]*\.(id|\w+Id|code)\}\s+[A-Za-z]/i.test(
      t,
    ),
  );
}

describe("the reading of a component's text", () => {
  test("catches an id, a raw state and an error code, but not attributes or labels", () => {
    const markup = `<script>let x = 1;</script>
      <li data-route={route.routeId} class:on={item.state === "sent"}>
        Route {route.routeId}: <strong>{route.state}</strong> {error.code}
        {routeStateLabel(route.state)} {item.subject}
      </li>`;
    expect(rawValuesShown(textOfMarkup(markup))).toEqual([
      "route.routeId",
      "route.state",
      "error.code",
    ]);
  });

  test("catches a sentence built around an id, not an element id", () => {
    expect(idsInSentences("const a = `cannot approve item ${shown.id}`;")).toHaveLength(1);
    expect(idsInSentences("const a = `Decision #${n}`;")).toHaveLength(1);
    expect(
      idsInSentences("const id = `item-${item.id}`; const k = `${a.id}:${b.version}`;"),
    ).toEqual([]);
  });
});

/**
 * Shown on purpose: the record's detail of one decision names the Gmail version and the sha256
 * it bound to, labelled, as the audit export does — the fingerprints the owner compares with
 * `countersign audit verify` — not as a way of naming the draft.
 */
const FORENSIC: Record<string, string[]> = {
  "components/RecordView.svelte": ["opened.entry.version", "opened.digest", "opened.entry.digest"],
};

describe("every text of the window", () => {
  const names = Object.keys(SOURCES).sort();

  test("the reading covers the components and the label modules", () => {
    expect(names).toContain("components/DetailPane.svelte");
    expect(names).toContain("components/QueueRow.svelte");
    expect(names).toContain("lib/labels.ts");
    expect(names.length).toBeGreaterThan(40);
  });

  test.each(names)("%s shows no id and no raw code", (name) => {
    const source = SOURCES[name] ?? "";
    const allowed = FORENSIC[name] ?? [];
    const markup = name.endsWith(".svelte")
      ? rawValuesShown(textOfMarkup(source)).filter((expr) => !allowed.includes(expr))
      : [];
    expect(markup, "printed in the markup's text").toEqual([]);
    expect(idsInSentences(source), "built into a sentence").toEqual([]);
  });
});
