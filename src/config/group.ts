/** The roles of a node in a multi-node group: the head serves the API, workers hold the rest of the model. */
export const groupRoles = ['head', 'worker'] as const;

/** How long a group may take to become ready when its nodes do not say (`readyWithin`). */
export const defaultGroupReadyWithinMs = 3_600_000;

/** The syntax of a group name: it becomes the `group` label of every metric of its nodes. */
export const groupNamePattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;
