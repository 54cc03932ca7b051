/** Server tests take their control plane from testkit. */
export * from '@trellis/testkit/controlPlane';
