import { v7 as uuidv7 } from "uuid"

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** A new identifier: a UUIDv7, so ids sort by creation time and index inserts stay local. */
export const newId = (): string => uuidv7()

/** True when the text is a UUID in canonical 8-4-4-4-12 form. */
export const isUuid = (text: string): boolean => UUID_PATTERN.test(text)
