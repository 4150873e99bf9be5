/** The INI dialect of BrainVision `.vhdr`/`.vmrk` files: `[Section]`, `key=value`, `;` comments. */

export type IniFile = Map<string, Map<string, string>>;

export function parseIni(text: string): IniFile {
  const sections: IniFile = new Map();
  let current = new Map<string, string>();
  sections.set('', current);
  let inComment = false;
  for (const raw of text.split(/\r\n|\r|\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith(';')) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      const name = header[1]!.trim().toLowerCase();
      // The free-text [Comment] section holds lines that look like keys; keep them out of the data sections.
      inComment = name === 'comment';
      current = sections.get(name) ?? new Map();
      sections.set(name, current);
      continue;
    }
    if (inComment) continue;
    const eq = line.indexOf('=');
    if (eq > 0) current.set(line.slice(0, eq).trim().toLowerCase(), line.slice(eq + 1).trim());
  }
  return sections;
}

export function iniValue(ini: IniFile, section: string, key: string): string | undefined {
  return ini.get(section.toLowerCase())?.get(key.toLowerCase());
}
