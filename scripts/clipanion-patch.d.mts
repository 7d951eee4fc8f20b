export const CLIPANION_CORE: RegExp;
export function patchClipanionCore(text: string): string;
