// step.mjs: the step runner both matrices share. stepper(norm) returns step(name, fn), which
// runs fn and prints one JSON line: the step's name and, on success, its result normalised
// by norm, or, on failure, the status and error code (and the message of a failure without
// a status); it returns the result, or undefined after a failure.
export function stepper(norm) {
  return async function step(name, fn) {
    try {
      const result = await fn();
      console.log(JSON.stringify({ step: name, ok: true, result: norm(result) }));
      return result;
    } catch (e) {
      const code = e?.details?.errorCode ?? e?.code ?? String(e?.name);
      const line = { step: name, ok: false, status: e?.statusCode ?? 0, code };
      if (!e?.statusCode) line.message = String(e?.message);
      console.log(JSON.stringify(line));
      return undefined;
    }
  };
}
