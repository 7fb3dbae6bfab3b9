export interface Deployment {
  id: string;
  status: "running" | "failed";
}

export type Status = Deployment["status"];

export class ApiClient {
  private base: string;

  constructor(base: string) {
    this.base = base;
  }

  /** Fetches one deployment. */
  async getDeployment(id: string): Promise<Deployment> {
    const res = await fetch(`${this.base}/deployments/${id}`);
    return res.json();
  }
}

export enum Color { Red, Green }

export const formatStatus = (s: Status): string => s.toUpperCase();
