import { ConfigError, createLogger, openArtifactStore } from '@trellis/server';
import { describe, expect, it } from 'vitest';

const logger = createLogger('silent');

/** DESIGN §1: the artifact store is chosen by the URL's scheme through a map of lazy loaders. */
describe('TRELLIS_ARTIFACTS_URL schemes', () => {
  it('opens s3: and gs: stores from their optional packages without contacting them, with the given environment', async () => {
    const s3 = await openArtifactStore('s3://trellis-bucket/prod', logger, {
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'secret',
    });
    expect(s3.constructor.name).toBe('S3ArtifactStore');
    expect(s3).toMatchObject({ bucket: 'trellis-bucket', prefix: 'prod' });
    expect(await (s3 as unknown as { client: { config: { region(): Promise<string> } } }).client.config.region()).toBe(
      'eu-west-1',
    );

    const gcs = await openArtifactStore('gs://trellis-bucket/prod', logger, { STORAGE_EMULATOR_HOST: '127.0.0.1:1' });
    expect(gcs.constructor.name).toBe('GcsArtifactStore');
    expect(gcs).toMatchObject({ prefix: 'prod', bucket: { name: 'trellis-bucket' } });
  });

  it('refuses an unknown scheme, naming the supported ones', async () => {
    const error = await openArtifactStore('azblob://container/prefix', logger, {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(
      'TRELLIS_ARTIFACTS_URL: unknown scheme "azblob:"; supported: file:, s3:, gs:',
    );
  });

  it('refuses a malformed s3: URL before serving', async () => {
    await expect(openArtifactStore('s3://Bad_Bucket/x', logger, {})).rejects.toMatchObject({
      code: 'invalid_artifacts_url',
    });
  });
});
