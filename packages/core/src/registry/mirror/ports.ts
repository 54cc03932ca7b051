import type { Page, PageRequest } from '../../domain/pagination.js';
import type { MirrorArchive, MirrorArchiveAddress, ProviderAddress } from './records.js';

/** Where the mirror's archives are recorded (their bytes are in the `ArtifactStore`). */
export interface MirrorStore {
  /** Records a new archive; `ConflictError('mirror_archive_exists')` when its address is taken. */
  insert(archive: MirrorArchive): Promise<MirrorArchive>;
  find(ownerId: string, address: MirrorArchiveAddress): Promise<MirrorArchive | null>;
  get(ownerId: string, id: string): Promise<MirrorArchive | null>;
  /** The archives of one provider (of one version when given), oldest first. */
  archives(ownerId: string, provider: ProviderAddress, version?: string): Promise<MirrorArchive[]>;
  /** The providers the owner's mirror holds, sorted by source address. */
  providers(ownerId: string): Promise<ProviderAddress[]>;
  /** The owner's archives, newest first. */
  page(ownerId: string, request: PageRequest): Promise<Page<MirrorArchive>>;
  /** False when there was no such archive. */
  delete(ownerId: string, id: string): Promise<boolean>;
  /** The artifact keys of every archive of the owner (their files go when the owner does). */
  storageKeys(ownerId: string): Promise<string[]>;
}
