import { apiKeysDataSource } from "./api-keys";
import { instanceDataSource } from "./instance";
import { instanceLogsDataSource } from "./instance-logs";
import { instancesDataSource } from "./instances";
import { offerDataSource } from "./offer";
import { offersDataSource } from "./offers";
import { sshKeysDataSource } from "./ssh-keys";
import { templateDataSource } from "./template";
import { templatesDataSource } from "./templates";

// The provider's data sources, one module each; src/provider.ts registers this list.

export * from "./objects";

/** Every data source of the provider, in documentation order. */
export const dataSources = [
  offersDataSource,
  offerDataSource,
  templatesDataSource,
  templateDataSource,
  sshKeysDataSource,
  instanceDataSource,
  instancesDataSource,
  apiKeysDataSource,
  instanceLogsDataSource,
] as const;

export {
  apiKeysDataSource,
  instanceDataSource,
  instanceLogsDataSource,
  instancesDataSource,
  offerDataSource,
  offersDataSource,
  sshKeysDataSource,
  templateDataSource,
  templatesDataSource,
};
