/** Outcome of one POST to the alert webhook. */
export type WebhookResult = { ok: true; status: number } | { ok: false; error: string; status?: number };

/**
 * POSTs one signed alert. Never throws: a non-2xx answer, a timeout or a network failure is a result
 * the caller turns into a retry. The error text names the status or the network error code, never the
 * URL (it may carry a token) nor any header.
 */
export async function postAlert(input: {
  url: string;
  rawBody: string;
  headers: Record<string, string>;
  timeoutMs: number;
}): Promise<WebhookResult> {
  try {
    const response = await fetch(input.url, {
      method: 'POST',
      headers: input.headers,
      body: input.rawBody,
      signal: AbortSignal.timeout(input.timeoutMs),
      redirect: 'manual', // a redirect is not a delivery; the receiver must answer 2xx itself
    });
    const snippet = await readSnippet(response);
    if (response.status >= 200 && response.status < 300) return { ok: true, status: response.status };
    return {
      ok: false,
      status: response.status,
      error: `HTTP ${response.status}${snippet === '' ? '' : `: ${snippet}`}`,
    };
  } catch (error) {
    return { ok: false, error: describeNetworkError(error, input.timeoutMs) };
  }
}

async function readSnippet(response: Response): Promise<string> {
  try {
    const text = await response.text();
    return text.replace(/\s+/g, ' ').trim().slice(0, 200);
  } catch {
    return '';
  }
}

function describeNetworkError(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return `timeout after ${timeoutMs} ms`;
  }
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  const code = typeof cause?.code === 'string' ? cause.code : undefined;
  return `network error${code === undefined ? '' : `: ${code}`}`;
}
