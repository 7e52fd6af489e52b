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
  /** At most this much of the reply is read (ALERT_WEBHOOK_MAX_REPLY_SIZE); the rest is dropped. */
  maxReplyBytes: number;
}): Promise<WebhookResult> {
  try {
    const response = await fetch(input.url, {
      method: 'POST',
      headers: input.headers,
      body: input.rawBody,
      signal: AbortSignal.timeout(input.timeoutMs),
      redirect: 'manual', // a redirect is not a delivery; the receiver must answer 2xx itself
    });
    const snippet = await readSnippet(response, input.maxReplyBytes);
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

/**
 * The start of the reply for the error text. Only the status decides delivery, so a receiver that
 * answers with megabytes costs at most `maxBytes`: reading stops there and the stream is cancelled.
 */
async function readSnippet(response: Response, maxBytes: number): Promise<string> {
  const reader = (response.body as ReadableStream<Uint8Array> | null)?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } catch {
    // A reply cut short still has its status; the snippet is only decoration.
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  const text = Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8');
  return text.replace(/\s+/g, ' ').trim().slice(0, 200);
}

function describeNetworkError(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return `timeout after ${timeoutMs} ms`;
  }
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  const code = typeof cause?.code === 'string' ? cause.code : undefined;
  return `network error${code === undefined ? '' : `: ${code}`}`;
}
