import { join } from 'node:path';
import { fileUrl, type ObjectStorageServer, requirePeer, startMinio, type TestDialect } from '@trellis/testkit';

const minio = requirePeer('minio', 'the registry on S3 (MinIO)');

/** The artifact store a registry suite runs on: the filesystem beside SQLite, S3 (MinIO) beside Postgres. */
export interface RegistryArtifacts {
  readonly kind: 'filesystem' | 's3';
  /** The server's `TRELLIS_ARTIFACTS_URL` and what else it needs to reach the store. */
  readonly env: Record<string, string>;
  stop(): Promise<void>;
}

/** False when the dialect's store cannot be started here (MinIO not built: `requirePeer` said why). */
export function registryArtifactsAvailable(dialect: TestDialect): boolean {
  return dialect === 'sqlite' || minio !== null;
}

/** Starts the store of `dialect`'s pairing; a filesystem store lives under `dir`. */
export async function startRegistryArtifacts(dialect: TestDialect, dir: string): Promise<RegistryArtifacts> {
  if (dialect === 'sqlite') {
    return {
      kind: 'filesystem',
      env: { TRELLIS_ARTIFACTS_URL: fileUrl(join(dir, 'artifacts')) },
      stop: async () => {},
    };
  }
  const objects: ObjectStorageServer = await startMinio(minio as string);
  return { kind: 's3', env: objects.artifactsEnv(await objects.createBucket(), 'trellis'), stop: () => objects.stop() };
}
