export * from './editInput.js';
export * from './retentionTask.js';
export * from './VineEditUseCases.js';
