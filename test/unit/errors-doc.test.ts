import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERRORS_DOC, renderErrorsDoc } from '../../scripts/errors-doc.js';

describe('the error code documentation', () => {
  it('documents every code of every catalogue (regenerate with npx tsx scripts/errors-doc.ts)', () => {
    expect(fs.readFileSync(ERRORS_DOC, 'utf8')).toBe(renderErrorsDoc());
  });
});
