/** Role names: letters, digits, `_` and `-` (they name memory files, so nothing that could leave the folder). */
export const ROLE_NAME = /^[A-Za-z0-9_-]{1,64}$/

/** The rule in words, for error messages. */
export const ROLE_NAME_RULE = '1-64 letters, digits, "_" or "-" (no dots, slashes or spaces)'

export function isRoleName(name: string): boolean {
  return ROLE_NAME.test(name)
}
