import React from "react";

type Props = { label: string };

export function Badge({ label }: Props) {
  return <span className="badge">{label}</span>;
}

export const Card: React.FC<Props> = ({ label }) => {
  const upper = label.toUpperCase();
  return <div className="card">{upper}</div>;
};
