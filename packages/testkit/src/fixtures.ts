/**
 * The fixtures tests over HTTP share: a vineyard holding one vine (configuration), made through
 * whatever client the test speaks with (`TrellisClient` or any object with the same two calls).
 */

/** A configuration OpenTofu plans and applies without a provider: one variable, one output. */
export const INLINE_MAIN_TF = `
variable "greeting" {
  type    = string
  default = "hello"
}
output "message" {
  value = var.greeting
}
`;

export type VariableInput = string | { value: string; sensitive?: boolean };

/** The two calls the fixture makes; `Input` is the client's own configuration input type. */
export interface VineFixtureClient<Vineyard extends { id: string }, Vine, Input> {
  createVineyard(name: string): Promise<Vineyard>;
  createConfiguration(input: Input): Promise<Vine>;
}

/**
 * A vineyard `<name>-yard` holding the vine `name`: by default the inline `INLINE_MAIN_TF` with
 * a plain and a sensitive variable; `vine` overrides the source, variables or any other field.
 */
export async function vineyardWithVine<Vineyard extends { id: string }, Vine, Input>(
  client: VineFixtureClient<Vineyard, Vine, Input>,
  name = 'web',
  vine: Partial<Input> = {},
): Promise<{ vineyard: Vineyard; vine: Vine }> {
  const vineyard = await client.createVineyard(`${name}-yard`);
  const defaults = {
    name,
    vineyard_id: vineyard.id,
    source: { type: 'inline', files: { 'main.tf': INLINE_MAIN_TF } },
    variables: { greeting: 'hi', db_password: { value: 's3cret-value', sensitive: true } } as Record<
      string,
      VariableInput
    >,
  };
  const created = await client.createConfiguration({ ...defaults, ...vine } as Input);
  return { vineyard, vine: created };
}
