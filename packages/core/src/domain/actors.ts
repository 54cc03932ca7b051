/** A person, authenticated by web session or CLI access token. */
export interface UserActor {
  userId: string;
  email: string;
}

/** An agent, authenticated by `X-Worker-ID` + `X-Worker-Token`. */
export interface WorkerActor {
  workerId: string;
  ownerId: string;
}
