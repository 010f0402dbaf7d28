/**
 * One shared abort reason. `controller.abort()` without a reason creates a DOMException whose
 * captured stack keeps the aborting actor (and its transcript copy) alive; a shared reason does not.
 */
export const abortReason: Error = Object.freeze(
  new DOMException("The operation was aborted", "AbortError"),
) as Error;

/** The reason a timed-out call's signal fires with. */
export const timeoutReason: Error = Object.freeze(
  new DOMException("The operation timed out", "TimeoutError"),
) as Error;
