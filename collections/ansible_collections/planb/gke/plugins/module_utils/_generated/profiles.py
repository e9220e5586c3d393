# Generated from planb's accelerator catalog (src/planb/catalog) by `make values`. Do not edit:
# change the catalog and regenerate; tests/unit/catalog/test_collection_facts.py fails when this is stale.
"""planb's profiles: PROFILES[name] -> one slice's node pool and chart values; ALIASES."""

from __future__ import annotations

import json
from typing import Any

FACTS: dict[str, Any] = json.loads(
    r"""
{
 "aliases": {
  "tpu-v4-1024": "tpu-v4-8x8x16",
  "tpu-v4-128": "tpu-v4-4x4x8",
  "tpu-v4-16": "tpu-v4-2x2x4",
  "tpu-v4-2048": "tpu-v4-8x16x16",
  "tpu-v4-256": "tpu-v4-4x8x8",
  "tpu-v4-32": "tpu-v4-2x4x4",
  "tpu-v4-4": "tpu-v4-2x2x1",
  "tpu-v4-512": "tpu-v4-8x8x8",
  "tpu-v4-64": "tpu-v4-4x4x4",
  "tpu-v4-8": "tpu-v4-2x2x2",
  "tpu-v5e-1": "tpu-v5e-1x1",
  "tpu-v5e-128": "tpu-v5e-8x16",
  "tpu-v5e-16": "tpu-v5e-4x4",
  "tpu-v5e-256": "tpu-v5e-16x16",
  "tpu-v5e-32": "tpu-v5e-4x8",
  "tpu-v5e-4": "tpu-v5e-2x2",
  "tpu-v5e-64": "tpu-v5e-8x8",
  "tpu-v5e-8": "tpu-v5e-2x4",
  "tpu-v5p-1024": "tpu-v5p-8x8x16",
  "tpu-v5p-128": "tpu-v5p-4x4x8",
  "tpu-v5p-16": "tpu-v5p-2x2x4",
  "tpu-v5p-2048": "tpu-v5p-8x16x16",
  "tpu-v5p-256": "tpu-v5p-4x8x8",
  "tpu-v5p-32": "tpu-v5p-2x4x4",
  "tpu-v5p-4": "tpu-v5p-2x2x1",
  "tpu-v5p-4096": "tpu-v5p-16x16x16",
  "tpu-v5p-512": "tpu-v5p-8x8x8",
  "tpu-v5p-64": "tpu-v5p-4x4x4",
  "tpu-v5p-8": "tpu-v5p-2x2x2",
  "tpu-v6e-1": "tpu-v6e-1x1",
  "tpu-v6e-128": "tpu-v6e-8x16",
  "tpu-v6e-16": "tpu-v6e-4x4",
  "tpu-v6e-256": "tpu-v6e-16x16",
  "tpu-v6e-32": "tpu-v6e-4x8",
  "tpu-v6e-4": "tpu-v6e-2x2",
  "tpu-v6e-64": "tpu-v6e-8x8",
  "tpu-v6e-8": "tpu-v6e-2x4",
  "tpu7x-1024": "tpu7x-8x8x16",
  "tpu7x-128": "tpu7x-4x4x8",
  "tpu7x-16": "tpu7x-2x2x4",
  "tpu7x-2048": "tpu7x-8x16x16",
  "tpu7x-256": "tpu7x-4x8x8",
  "tpu7x-32": "tpu7x-2x4x4",
  "tpu7x-4": "tpu7x-2x2x1",
  "tpu7x-512": "tpu7x-8x8x8",
  "tpu7x-64": "tpu7x-4x4x4",
  "tpu7x-8": "tpu7x-2x2x2"
 },
 "profiles": {
  "gpu-a3-h100-1": {
   "alias": null,
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 1,
     "gkeAccelerator": "nvidia-h100-80gb",
     "hostsPerSlice": 1,
     "kind": "gpu",
     "machineType": "a3-highgpu-1g",
     "peakTflops": 989.0,
     "rayAcceleratorType": "H100",
     "resource": "nvidia.com/gpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "nvidia.com/gpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": ""
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311-gpu",
     "pip": [
      "jax[cuda12]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "2",
       "memory": "4Gi"
      }
     }
    },
    "profile": "gpu-a3-h100-1",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 1,
       "cpu": 2,
       "memory": "4Gi"
      },
      "onDemand": {
       "accelerator": 1,
       "cpu": 2,
       "memory": "4Gi"
      }
     }
    }
   },
   "machine_type": "a3-highgpu-1g",
   "node_pools": {
    "a3-highgpu-1g": {
     "accelerator_count": 1,
     "chips_per_slice": 1,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/how-to/gpus",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "a3",
     "gke_accelerator": "nvidia-h100-80gb",
     "hosts_per_slice": 1,
     "initial_nodes": 0,
     "kind": "gpu",
     "machine_type": "a3-highgpu-1g",
     "max_nodes": 1,
     "min_nodes": 0,
     "multi_host": false,
     "node_labels": {
      "cloud.google.com/gke-accelerator": "nvidia-h100-80gb"
     },
     "nodes_per_slice": 1,
     "placement_policy_required": false,
     "profile": "gpu-a3-h100-1",
     "resource_name": "nvidia.com/gpu",
     "slices": 1,
     "total_chips": 1,
     "total_nodes": 1,
     "tpu_topology": null
    }
   }
  },
  "gpu-a3-h100-2": {
   "alias": null,
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 2,
     "gkeAccelerator": "nvidia-h100-80gb",
     "hostsPerSlice": 1,
     "kind": "gpu",
     "machineType": "a3-highgpu-2g",
     "peakTflops": 989.0,
     "rayAcceleratorType": "H100",
     "resource": "nvidia.com/gpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "nvidia.com/gpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": ""
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311-gpu",
     "pip": [
      "jax[cuda12]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "4",
       "memory": "8Gi"
      }
     }
    },
    "profile": "gpu-a3-h100-2",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 2,
       "cpu": 4,
       "memory": "8Gi"
      },
      "onDemand": {
       "accelerator": 2,
       "cpu": 4,
       "memory": "8Gi"
      }
     }
    }
   },
   "machine_type": "a3-highgpu-2g",
   "node_pools": {
    "a3-highgpu-2g": {
     "accelerator_count": 2,
     "chips_per_slice": 2,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/how-to/gpus",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "a3",
     "gke_accelerator": "nvidia-h100-80gb",
     "hosts_per_slice": 1,
     "initial_nodes": 0,
     "kind": "gpu",
     "machine_type": "a3-highgpu-2g",
     "max_nodes": 1,
     "min_nodes": 0,
     "multi_host": false,
     "node_labels": {
      "cloud.google.com/gke-accelerator": "nvidia-h100-80gb"
     },
     "nodes_per_slice": 1,
     "placement_policy_required": false,
     "profile": "gpu-a3-h100-2",
     "resource_name": "nvidia.com/gpu",
     "slices": 1,
     "total_chips": 2,
     "total_nodes": 1,
     "tpu_topology": null
    }
   }
  },
  "gpu-a3-h100-4": {
   "alias": null,
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "nvidia-h100-80gb",
     "hostsPerSlice": 1,
     "kind": "gpu",
     "machineType": "a3-highgpu-4g",
     "peakTflops": 989.0,
     "rayAcceleratorType": "H100",
     "resource": "nvidia.com/gpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "nvidia.com/gpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": ""
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311-gpu",
     "pip": [
      "jax[cuda12]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "gpu-a3-h100-4",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 4,
       "cpu": 8,
       "memory": "16Gi"
      },
      "onDemand": {
       "accelerator": 4,
       "cpu": 8,
       "memory": "16Gi"
      }
     }
    }
   },
   "machine_type": "a3-highgpu-4g",
   "node_pools": {
    "a3-highgpu-4g": {
     "accelerator_count": 4,
     "chips_per_slice": 4,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/how-to/gpus",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "a3",
     "gke_accelerator": "nvidia-h100-80gb",
     "hosts_per_slice": 1,
     "initial_nodes": 0,
     "kind": "gpu",
     "machine_type": "a3-highgpu-4g",
     "max_nodes": 1,
     "min_nodes": 0,
     "multi_host": false,
     "node_labels": {
      "cloud.google.com/gke-accelerator": "nvidia-h100-80gb"
     },
     "nodes_per_slice": 1,
     "placement_policy_required": false,
     "profile": "gpu-a3-h100-4",
     "resource_name": "nvidia.com/gpu",
     "slices": 1,
     "total_chips": 4,
     "total_nodes": 1,
     "tpu_topology": null
    }
   }
  },
  "gpu-a3-h100-8": {
   "alias": null,
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 8,
     "gkeAccelerator": "nvidia-h100-80gb",
     "hostsPerSlice": 1,
     "kind": "gpu",
     "machineType": "a3-highgpu-8g",
     "peakTflops": 989.0,
     "rayAcceleratorType": "H100",
     "resource": "nvidia.com/gpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "nvidia.com/gpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": ""
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311-gpu",
     "pip": [
      "jax[cuda12]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "16",
       "memory": "32Gi"
      }
     }
    },
    "profile": "gpu-a3-h100-8",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 8,
       "cpu": 16,
       "memory": "32Gi"
      },
      "onDemand": {
       "accelerator": 8,
       "cpu": 16,
       "memory": "32Gi"
      }
     }
    }
   },
   "machine_type": "a3-highgpu-8g",
   "node_pools": {
    "a3-highgpu-8g": {
     "accelerator_count": 8,
     "chips_per_slice": 8,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/how-to/gpus",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "a3",
     "gke_accelerator": "nvidia-h100-80gb",
     "hosts_per_slice": 1,
     "initial_nodes": 0,
     "kind": "gpu",
     "machine_type": "a3-highgpu-8g",
     "max_nodes": 1,
     "min_nodes": 0,
     "multi_host": false,
     "node_labels": {
      "cloud.google.com/gke-accelerator": "nvidia-h100-80gb"
     },
     "nodes_per_slice": 1,
     "placement_policy_required": false,
     "profile": "gpu-a3-h100-8",
     "resource_name": "nvidia.com/gpu",
     "slices": 1,
     "total_chips": 8,
     "total_nodes": 1,
     "tpu_topology": null
    }
   }
  },
  "gpu-a3-mega-h100-8": {
   "alias": null,
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 8,
     "gkeAccelerator": "nvidia-h100-mega-80gb",
     "hostsPerSlice": 1,
     "kind": "gpu",
     "machineType": "a3-megagpu-8g",
     "peakTflops": 989.0,
     "rayAcceleratorType": "H100",
     "resource": "nvidia.com/gpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "nvidia.com/gpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": ""
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311-gpu",
     "pip": [
      "jax[cuda12]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "16",
       "memory": "32Gi"
      }
     }
    },
    "profile": "gpu-a3-mega-h100-8",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 8,
       "cpu": 16,
       "memory": "32Gi"
      },
      "onDemand": {
       "accelerator": 8,
       "cpu": 16,
       "memory": "32Gi"
      }
     }
    }
   },
   "machine_type": "a3-megagpu-8g",
   "node_pools": {
    "a3-megagpu-8g": {
     "accelerator_count": 8,
     "chips_per_slice": 8,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/how-to/gpus",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "a3-mega",
     "gke_accelerator": "nvidia-h100-mega-80gb",
     "hosts_per_slice": 1,
     "initial_nodes": 0,
     "kind": "gpu",
     "machine_type": "a3-megagpu-8g",
     "max_nodes": 1,
     "min_nodes": 0,
     "multi_host": false,
     "node_labels": {
      "cloud.google.com/gke-accelerator": "nvidia-h100-mega-80gb"
     },
     "nodes_per_slice": 1,
     "placement_policy_required": false,
     "profile": "gpu-a3-mega-h100-8",
     "resource_name": "nvidia.com/gpu",
     "slices": 1,
     "total_chips": 8,
     "total_nodes": 1,
     "tpu_topology": null
    }
   }
  },
  "gpu-a3-ultra-h200-8": {
   "alias": null,
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 8,
     "gkeAccelerator": "nvidia-h200-141gb",
     "hostsPerSlice": 1,
     "kind": "gpu",
     "machineType": "a3-ultragpu-8g",
     "peakTflops": 989.0,
     "rayAcceleratorType": "H200",
     "resource": "nvidia.com/gpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "nvidia.com/gpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": ""
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311-gpu",
     "pip": [
      "jax[cuda12]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "16",
       "memory": "32Gi"
      }
     }
    },
    "profile": "gpu-a3-ultra-h200-8",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 8,
       "cpu": 16,
       "memory": "32Gi"
      },
      "onDemand": {
       "accelerator": 8,
       "cpu": 16,
       "memory": "32Gi"
      }
     }
    }
   },
   "machine_type": "a3-ultragpu-8g",
   "node_pools": {
    "a3-ultragpu-8g": {
     "accelerator_count": 8,
     "chips_per_slice": 8,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/how-to/gpus",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "a3-ultra",
     "gke_accelerator": "nvidia-h200-141gb",
     "hosts_per_slice": 1,
     "initial_nodes": 0,
     "kind": "gpu",
     "machine_type": "a3-ultragpu-8g",
     "max_nodes": 1,
     "min_nodes": 0,
     "multi_host": false,
     "node_labels": {
      "cloud.google.com/gke-accelerator": "nvidia-h200-141gb"
     },
     "nodes_per_slice": 1,
     "placement_policy_required": false,
     "profile": "gpu-a3-ultra-h200-8",
     "resource_name": "nvidia.com/gpu",
     "slices": 1,
     "total_chips": 8,
     "total_nodes": 1,
     "tpu_topology": null
    }
   }
  },
  "gpu-a4-b200-8": {
   "alias": null,
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 8,
     "gkeAccelerator": "nvidia-b200",
     "hostsPerSlice": 1,
     "kind": "gpu",
     "machineType": "a4-highgpu-8g",
     "peakTflops": 2250.0,
     "rayAcceleratorType": "B200",
     "resource": "nvidia.com/gpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "nvidia.com/gpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": ""
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311-gpu",
     "pip": [
      "jax[cuda12]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "16",
       "memory": "32Gi"
      }
     }
    },
    "profile": "gpu-a4-b200-8",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 8,
       "cpu": 16,
       "memory": "32Gi"
      },
      "onDemand": {
       "accelerator": 8,
       "cpu": 16,
       "memory": "32Gi"
      }
     }
    }
   },
   "machine_type": "a4-highgpu-8g",
   "node_pools": {
    "a4-highgpu-8g": {
     "accelerator_count": 8,
     "chips_per_slice": 8,
     "doc_url": "https://cloud.google.com/compute/docs/accelerator-optimized-machines",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "a4",
     "gke_accelerator": "nvidia-b200",
     "hosts_per_slice": 1,
     "initial_nodes": 0,
     "kind": "gpu",
     "machine_type": "a4-highgpu-8g",
     "max_nodes": 1,
     "min_nodes": 0,
     "multi_host": false,
     "node_labels": {
      "cloud.google.com/gke-accelerator": "nvidia-b200"
     },
     "nodes_per_slice": 1,
     "placement_policy_required": false,
     "profile": "gpu-a4-b200-8",
     "resource_name": "nvidia.com/gpu",
     "slices": 1,
     "total_chips": 8,
     "total_nodes": 1,
     "tpu_topology": null
    }
   }
  },
  "tpu-v4-2x2x1": {
   "alias": "tpu-v4-4",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v4-podslice",
     "hostsPerSlice": 1,
     "kind": "tpu",
     "machineType": "ct4p-hightpu-4t",
     "peakTflops": 275.0,
     "rayAcceleratorType": "TPU-V4",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "2x2x1"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v4-2x2x1",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 4,
       "cpu": 8,
       "memory": "16Gi"
      },
      "onDemand": {
       "accelerator": 4,
       "cpu": 8,
       "memory": "16Gi"
      }
     }
    }
   },
   "machine_type": "ct4p-hightpu-4t",
   "node_pools": {
    "ct4p-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 4,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": false,
     "generation": "v4",
     "gke_accelerator": "tpu-v4-podslice",
     "hosts_per_slice": 1,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct4p-hightpu-4t",
     "max_nodes": 1,
     "min_nodes": 0,
     "multi_host": false,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v4-podslice",
      "cloud.google.com/gke-tpu-topology": "2x2x1"
     },
     "nodes_per_slice": 1,
     "placement_policy_required": false,
     "profile": "tpu-v4-2x2x1",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 4,
     "total_nodes": 1,
     "tpu_topology": "2x2x1"
    }
   }
  },
  "tpu-v4-2x2x2": {
   "alias": "tpu-v4-8",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v4-podslice",
     "hostsPerSlice": 2,
     "kind": "tpu",
     "machineType": "ct4p-hightpu-4t",
     "peakTflops": 275.0,
     "rayAcceleratorType": "TPU-V4",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "2x2x2"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v4-2x2x2",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 8,
       "cpu": 16,
       "memory": "32Gi"
      },
      "onDemand": {
       "accelerator": 8,
       "cpu": 16,
       "memory": "32Gi"
      }
     }
    }
   },
   "machine_type": "ct4p-hightpu-4t",
   "node_pools": {
    "ct4p-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 8,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": false,
     "generation": "v4",
     "gke_accelerator": "tpu-v4-podslice",
     "hosts_per_slice": 2,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct4p-hightpu-4t",
     "max_nodes": 2,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v4-podslice",
      "cloud.google.com/gke-tpu-topology": "2x2x2"
     },
     "nodes_per_slice": 2,
     "placement_policy_required": false,
     "profile": "tpu-v4-2x2x2",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 8,
     "total_nodes": 2,
     "tpu_topology": "2x2x2"
    }
   }
  },
  "tpu-v4-2x2x4": {
   "alias": "tpu-v4-16",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v4-podslice",
     "hostsPerSlice": 4,
     "kind": "tpu",
     "machineType": "ct4p-hightpu-4t",
     "peakTflops": 275.0,
     "rayAcceleratorType": "TPU-V4",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "2x2x4"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v4-2x2x4",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 16,
       "cpu": 32,
       "memory": "64Gi"
      },
      "onDemand": {
       "accelerator": 16,
       "cpu": 32,
       "memory": "64Gi"
      }
     }
    }
   },
   "machine_type": "ct4p-hightpu-4t",
   "node_pools": {
    "ct4p-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 16,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": false,
     "generation": "v4",
     "gke_accelerator": "tpu-v4-podslice",
     "hosts_per_slice": 4,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct4p-hightpu-4t",
     "max_nodes": 4,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v4-podslice",
      "cloud.google.com/gke-tpu-topology": "2x2x4"
     },
     "nodes_per_slice": 4,
     "placement_policy_required": false,
     "profile": "tpu-v4-2x2x4",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 16,
     "total_nodes": 4,
     "tpu_topology": "2x2x4"
    }
   }
  },
  "tpu-v4-2x4x4": {
   "alias": "tpu-v4-32",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v4-podslice",
     "hostsPerSlice": 8,
     "kind": "tpu",
     "machineType": "ct4p-hightpu-4t",
     "peakTflops": 275.0,
     "rayAcceleratorType": "TPU-V4",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "2x4x4"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v4-2x4x4",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 32,
       "cpu": 64,
       "memory": "128Gi"
      },
      "onDemand": {
       "accelerator": 32,
       "cpu": 64,
       "memory": "128Gi"
      }
     }
    }
   },
   "machine_type": "ct4p-hightpu-4t",
   "node_pools": {
    "ct4p-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 32,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": false,
     "generation": "v4",
     "gke_accelerator": "tpu-v4-podslice",
     "hosts_per_slice": 8,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct4p-hightpu-4t",
     "max_nodes": 8,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v4-podslice",
      "cloud.google.com/gke-tpu-topology": "2x4x4"
     },
     "nodes_per_slice": 8,
     "placement_policy_required": false,
     "profile": "tpu-v4-2x4x4",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 32,
     "total_nodes": 8,
     "tpu_topology": "2x4x4"
    }
   }
  },
  "tpu-v4-4x4x4": {
   "alias": "tpu-v4-64",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v4-podslice",
     "hostsPerSlice": 16,
     "kind": "tpu",
     "machineType": "ct4p-hightpu-4t",
     "peakTflops": 275.0,
     "rayAcceleratorType": "TPU-V4",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "4x4x4"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v4-4x4x4",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 64,
       "cpu": 128,
       "memory": "256Gi"
      },
      "onDemand": {
       "accelerator": 64,
       "cpu": 128,
       "memory": "256Gi"
      }
     }
    }
   },
   "machine_type": "ct4p-hightpu-4t",
   "node_pools": {
    "ct4p-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 64,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": false,
     "generation": "v4",
     "gke_accelerator": "tpu-v4-podslice",
     "hosts_per_slice": 16,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct4p-hightpu-4t",
     "max_nodes": 16,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v4-podslice",
      "cloud.google.com/gke-tpu-topology": "4x4x4"
     },
     "nodes_per_slice": 16,
     "placement_policy_required": false,
     "profile": "tpu-v4-4x4x4",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 64,
     "total_nodes": 16,
     "tpu_topology": "4x4x4"
    }
   }
  },
  "tpu-v4-4x4x8": {
   "alias": "tpu-v4-128",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v4-podslice",
     "hostsPerSlice": 32,
     "kind": "tpu",
     "machineType": "ct4p-hightpu-4t",
     "peakTflops": 275.0,
     "rayAcceleratorType": "TPU-V4",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "4x4x8"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v4-4x4x8",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 128,
       "cpu": 256,
       "memory": "512Gi"
      },
      "onDemand": {
       "accelerator": 128,
       "cpu": 256,
       "memory": "512Gi"
      }
     }
    }
   },
   "machine_type": "ct4p-hightpu-4t",
   "node_pools": {
    "ct4p-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 128,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": false,
     "generation": "v4",
     "gke_accelerator": "tpu-v4-podslice",
     "hosts_per_slice": 32,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct4p-hightpu-4t",
     "max_nodes": 32,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v4-podslice",
      "cloud.google.com/gke-tpu-topology": "4x4x8"
     },
     "nodes_per_slice": 32,
     "placement_policy_required": false,
     "profile": "tpu-v4-4x4x8",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 128,
     "total_nodes": 32,
     "tpu_topology": "4x4x8"
    }
   }
  },
  "tpu-v4-4x8x8": {
   "alias": "tpu-v4-256",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v4-podslice",
     "hostsPerSlice": 64,
     "kind": "tpu",
     "machineType": "ct4p-hightpu-4t",
     "peakTflops": 275.0,
     "rayAcceleratorType": "TPU-V4",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "4x8x8"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v4-4x8x8",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 256,
       "cpu": 512,
       "memory": "1024Gi"
      },
      "onDemand": {
       "accelerator": 256,
       "cpu": 512,
       "memory": "1024Gi"
      }
     }
    }
   },
   "machine_type": "ct4p-hightpu-4t",
   "node_pools": {
    "ct4p-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 256,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": false,
     "generation": "v4",
     "gke_accelerator": "tpu-v4-podslice",
     "hosts_per_slice": 64,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct4p-hightpu-4t",
     "max_nodes": 64,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v4-podslice",
      "cloud.google.com/gke-tpu-topology": "4x8x8"
     },
     "nodes_per_slice": 64,
     "placement_policy_required": false,
     "profile": "tpu-v4-4x8x8",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 256,
     "total_nodes": 64,
     "tpu_topology": "4x8x8"
    }
   }
  },
  "tpu-v4-8x16x16": {
   "alias": "tpu-v4-2048",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v4-podslice",
     "hostsPerSlice": 512,
     "kind": "tpu",
     "machineType": "ct4p-hightpu-4t",
     "peakTflops": 275.0,
     "rayAcceleratorType": "TPU-V4",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "8x16x16"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v4-8x16x16",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 2048,
       "cpu": 4096,
       "memory": "8192Gi"
      },
      "onDemand": {
       "accelerator": 2048,
       "cpu": 4096,
       "memory": "8192Gi"
      }
     }
    }
   },
   "machine_type": "ct4p-hightpu-4t",
   "node_pools": {
    "ct4p-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 2048,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": false,
     "generation": "v4",
     "gke_accelerator": "tpu-v4-podslice",
     "hosts_per_slice": 512,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct4p-hightpu-4t",
     "max_nodes": 512,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v4-podslice",
      "cloud.google.com/gke-tpu-topology": "8x16x16"
     },
     "nodes_per_slice": 512,
     "placement_policy_required": false,
     "profile": "tpu-v4-8x16x16",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 2048,
     "total_nodes": 512,
     "tpu_topology": "8x16x16"
    }
   }
  },
  "tpu-v4-8x8x16": {
   "alias": "tpu-v4-1024",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v4-podslice",
     "hostsPerSlice": 256,
     "kind": "tpu",
     "machineType": "ct4p-hightpu-4t",
     "peakTflops": 275.0,
     "rayAcceleratorType": "TPU-V4",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "8x8x16"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v4-8x8x16",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 1024,
       "cpu": 2048,
       "memory": "4096Gi"
      },
      "onDemand": {
       "accelerator": 1024,
       "cpu": 2048,
       "memory": "4096Gi"
      }
     }
    }
   },
   "machine_type": "ct4p-hightpu-4t",
   "node_pools": {
    "ct4p-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 1024,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": false,
     "generation": "v4",
     "gke_accelerator": "tpu-v4-podslice",
     "hosts_per_slice": 256,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct4p-hightpu-4t",
     "max_nodes": 256,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v4-podslice",
      "cloud.google.com/gke-tpu-topology": "8x8x16"
     },
     "nodes_per_slice": 256,
     "placement_policy_required": false,
     "profile": "tpu-v4-8x8x16",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 1024,
     "total_nodes": 256,
     "tpu_topology": "8x8x16"
    }
   }
  },
  "tpu-v4-8x8x8": {
   "alias": "tpu-v4-512",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v4-podslice",
     "hostsPerSlice": 128,
     "kind": "tpu",
     "machineType": "ct4p-hightpu-4t",
     "peakTflops": 275.0,
     "rayAcceleratorType": "TPU-V4",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "8x8x8"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v4-8x8x8",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 512,
       "cpu": 1024,
       "memory": "2048Gi"
      },
      "onDemand": {
       "accelerator": 512,
       "cpu": 1024,
       "memory": "2048Gi"
      }
     }
    }
   },
   "machine_type": "ct4p-hightpu-4t",
   "node_pools": {
    "ct4p-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 512,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": false,
     "generation": "v4",
     "gke_accelerator": "tpu-v4-podslice",
     "hosts_per_slice": 128,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct4p-hightpu-4t",
     "max_nodes": 128,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v4-podslice",
      "cloud.google.com/gke-tpu-topology": "8x8x8"
     },
     "nodes_per_slice": 128,
     "placement_policy_required": false,
     "profile": "tpu-v4-8x8x8",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 512,
     "total_nodes": 128,
     "tpu_topology": "8x8x8"
    }
   }
  },
  "tpu-v5e-16x16": {
   "alias": "tpu-v5e-256",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v5-lite-podslice",
     "hostsPerSlice": 64,
     "kind": "tpu",
     "machineType": "ct5lp-hightpu-4t",
     "peakTflops": 197.0,
     "rayAcceleratorType": "TPU-V5LITEPOD",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "16x16"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 16,
       "dModel": 1024,
       "numHeads": 8,
       "numLayers": 12,
       "remat": "none",
       "seqLen": 1024,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v5e-16x16",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 256,
       "cpu": 512,
       "memory": "1024Gi"
      },
      "onDemand": {
       "accelerator": 256,
       "cpu": 512,
       "memory": "1024Gi"
      }
     }
    }
   },
   "machine_type": "ct5lp-hightpu-4t",
   "node_pools": {
    "ct5lp-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 256,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v5e",
     "gke_accelerator": "tpu-v5-lite-podslice",
     "hosts_per_slice": 64,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct5lp-hightpu-4t",
     "max_nodes": 64,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
      "cloud.google.com/gke-tpu-topology": "16x16"
     },
     "nodes_per_slice": 64,
     "placement_policy_required": false,
     "profile": "tpu-v5e-16x16",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 256,
     "total_nodes": 64,
     "tpu_topology": "16x16"
    }
   }
  },
  "tpu-v5e-1x1": {
   "alias": "tpu-v5e-1",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 1,
     "gkeAccelerator": "tpu-v5-lite-podslice",
     "hostsPerSlice": 1,
     "kind": "tpu",
     "machineType": "ct5lp-hightpu-1t",
     "peakTflops": 197.0,
     "rayAcceleratorType": "TPU-V5LITEPOD",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "1x1"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 16,
       "dModel": 1024,
       "numHeads": 8,
       "numLayers": 12,
       "remat": "none",
       "seqLen": 1024,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "2",
       "memory": "4Gi"
      }
     }
    },
    "profile": "tpu-v5e-1x1",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 1,
       "cpu": 2,
       "memory": "4Gi"
      },
      "onDemand": {
       "accelerator": 1,
       "cpu": 2,
       "memory": "4Gi"
      }
     }
    }
   },
   "machine_type": "ct5lp-hightpu-1t",
   "node_pools": {
    "ct5lp-hightpu-1t": {
     "accelerator_count": 1,
     "chips_per_slice": 1,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v5e",
     "gke_accelerator": "tpu-v5-lite-podslice",
     "hosts_per_slice": 1,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct5lp-hightpu-1t",
     "max_nodes": 1,
     "min_nodes": 0,
     "multi_host": false,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
      "cloud.google.com/gke-tpu-topology": "1x1"
     },
     "nodes_per_slice": 1,
     "placement_policy_required": false,
     "profile": "tpu-v5e-1x1",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 1,
     "total_nodes": 1,
     "tpu_topology": "1x1"
    }
   }
  },
  "tpu-v5e-2x2": {
   "alias": "tpu-v5e-4",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v5-lite-podslice",
     "hostsPerSlice": 1,
     "kind": "tpu",
     "machineType": "ct5lp-hightpu-4t",
     "peakTflops": 197.0,
     "rayAcceleratorType": "TPU-V5LITEPOD",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "2x2"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 16,
       "dModel": 1024,
       "numHeads": 8,
       "numLayers": 12,
       "remat": "none",
       "seqLen": 1024,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v5e-2x2",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 4,
       "cpu": 8,
       "memory": "16Gi"
      },
      "onDemand": {
       "accelerator": 4,
       "cpu": 8,
       "memory": "16Gi"
      }
     }
    }
   },
   "machine_type": "ct5lp-hightpu-4t",
   "node_pools": {
    "ct5lp-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 4,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v5e",
     "gke_accelerator": "tpu-v5-lite-podslice",
     "hosts_per_slice": 1,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct5lp-hightpu-4t",
     "max_nodes": 1,
     "min_nodes": 0,
     "multi_host": false,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
      "cloud.google.com/gke-tpu-topology": "2x2"
     },
     "nodes_per_slice": 1,
     "placement_policy_required": false,
     "profile": "tpu-v5e-2x2",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 4,
     "total_nodes": 1,
     "tpu_topology": "2x2"
    }
   }
  },
  "tpu-v5e-2x4": {
   "alias": "tpu-v5e-8",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 8,
     "gkeAccelerator": "tpu-v5-lite-podslice",
     "hostsPerSlice": 1,
     "kind": "tpu",
     "machineType": "ct5lp-hightpu-8t",
     "peakTflops": 197.0,
     "rayAcceleratorType": "TPU-V5LITEPOD",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "2x4"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 16,
       "dModel": 1024,
       "numHeads": 8,
       "numLayers": 12,
       "remat": "none",
       "seqLen": 1024,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "16",
       "memory": "32Gi"
      }
     }
    },
    "profile": "tpu-v5e-2x4",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 8,
       "cpu": 16,
       "memory": "32Gi"
      },
      "onDemand": {
       "accelerator": 8,
       "cpu": 16,
       "memory": "32Gi"
      }
     }
    }
   },
   "machine_type": "ct5lp-hightpu-8t",
   "node_pools": {
    "ct5lp-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 8,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v5e",
     "gke_accelerator": "tpu-v5-lite-podslice",
     "hosts_per_slice": 2,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct5lp-hightpu-4t",
     "max_nodes": 2,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
      "cloud.google.com/gke-tpu-topology": "2x4"
     },
     "nodes_per_slice": 2,
     "placement_policy_required": false,
     "profile": "tpu-v5e-2x4",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 8,
     "total_nodes": 2,
     "tpu_topology": "2x4"
    },
    "ct5lp-hightpu-8t": {
     "accelerator_count": 8,
     "chips_per_slice": 8,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v5e",
     "gke_accelerator": "tpu-v5-lite-podslice",
     "hosts_per_slice": 1,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct5lp-hightpu-8t",
     "max_nodes": 1,
     "min_nodes": 0,
     "multi_host": false,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
      "cloud.google.com/gke-tpu-topology": "2x4"
     },
     "nodes_per_slice": 1,
     "placement_policy_required": false,
     "profile": "tpu-v5e-2x4",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 8,
     "total_nodes": 1,
     "tpu_topology": "2x4"
    }
   }
  },
  "tpu-v5e-4x4": {
   "alias": "tpu-v5e-16",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v5-lite-podslice",
     "hostsPerSlice": 4,
     "kind": "tpu",
     "machineType": "ct5lp-hightpu-4t",
     "peakTflops": 197.0,
     "rayAcceleratorType": "TPU-V5LITEPOD",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "4x4"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 16,
       "dModel": 1024,
       "numHeads": 8,
       "numLayers": 12,
       "remat": "none",
       "seqLen": 1024,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v5e-4x4",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 16,
       "cpu": 32,
       "memory": "64Gi"
      },
      "onDemand": {
       "accelerator": 16,
       "cpu": 32,
       "memory": "64Gi"
      }
     }
    }
   },
   "machine_type": "ct5lp-hightpu-4t",
   "node_pools": {
    "ct5lp-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 16,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v5e",
     "gke_accelerator": "tpu-v5-lite-podslice",
     "hosts_per_slice": 4,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct5lp-hightpu-4t",
     "max_nodes": 4,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
      "cloud.google.com/gke-tpu-topology": "4x4"
     },
     "nodes_per_slice": 4,
     "placement_policy_required": false,
     "profile": "tpu-v5e-4x4",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 16,
     "total_nodes": 4,
     "tpu_topology": "4x4"
    }
   }
  },
  "tpu-v5e-4x8": {
   "alias": "tpu-v5e-32",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v5-lite-podslice",
     "hostsPerSlice": 8,
     "kind": "tpu",
     "machineType": "ct5lp-hightpu-4t",
     "peakTflops": 197.0,
     "rayAcceleratorType": "TPU-V5LITEPOD",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "4x8"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 16,
       "dModel": 1024,
       "numHeads": 8,
       "numLayers": 12,
       "remat": "none",
       "seqLen": 1024,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v5e-4x8",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 32,
       "cpu": 64,
       "memory": "128Gi"
      },
      "onDemand": {
       "accelerator": 32,
       "cpu": 64,
       "memory": "128Gi"
      }
     }
    }
   },
   "machine_type": "ct5lp-hightpu-4t",
   "node_pools": {
    "ct5lp-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 32,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v5e",
     "gke_accelerator": "tpu-v5-lite-podslice",
     "hosts_per_slice": 8,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct5lp-hightpu-4t",
     "max_nodes": 8,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
      "cloud.google.com/gke-tpu-topology": "4x8"
     },
     "nodes_per_slice": 8,
     "placement_policy_required": false,
     "profile": "tpu-v5e-4x8",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 32,
     "total_nodes": 8,
     "tpu_topology": "4x8"
    }
   }
  },
  "tpu-v5e-8x16": {
   "alias": "tpu-v5e-128",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v5-lite-podslice",
     "hostsPerSlice": 32,
     "kind": "tpu",
     "machineType": "ct5lp-hightpu-4t",
     "peakTflops": 197.0,
     "rayAcceleratorType": "TPU-V5LITEPOD",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "8x16"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 16,
       "dModel": 1024,
       "numHeads": 8,
       "numLayers": 12,
       "remat": "none",
       "seqLen": 1024,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v5e-8x16",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 128,
       "cpu": 256,
       "memory": "512Gi"
      },
      "onDemand": {
       "accelerator": 128,
       "cpu": 256,
       "memory": "512Gi"
      }
     }
    }
   },
   "machine_type": "ct5lp-hightpu-4t",
   "node_pools": {
    "ct5lp-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 128,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v5e",
     "gke_accelerator": "tpu-v5-lite-podslice",
     "hosts_per_slice": 32,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct5lp-hightpu-4t",
     "max_nodes": 32,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
      "cloud.google.com/gke-tpu-topology": "8x16"
     },
     "nodes_per_slice": 32,
     "placement_policy_required": false,
     "profile": "tpu-v5e-8x16",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 128,
     "total_nodes": 32,
     "tpu_topology": "8x16"
    }
   }
  },
  "tpu-v5e-8x8": {
   "alias": "tpu-v5e-64",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v5-lite-podslice",
     "hostsPerSlice": 16,
     "kind": "tpu",
     "machineType": "ct5lp-hightpu-4t",
     "peakTflops": 197.0,
     "rayAcceleratorType": "TPU-V5LITEPOD",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "8x8"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 16,
       "dModel": 1024,
       "numHeads": 8,
       "numLayers": 12,
       "remat": "none",
       "seqLen": 1024,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v5e-8x8",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 64,
       "cpu": 128,
       "memory": "256Gi"
      },
      "onDemand": {
       "accelerator": 64,
       "cpu": 128,
       "memory": "256Gi"
      }
     }
    }
   },
   "machine_type": "ct5lp-hightpu-4t",
   "node_pools": {
    "ct5lp-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 64,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v5e",
     "gke_accelerator": "tpu-v5-lite-podslice",
     "hosts_per_slice": 16,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct5lp-hightpu-4t",
     "max_nodes": 16,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
      "cloud.google.com/gke-tpu-topology": "8x8"
     },
     "nodes_per_slice": 16,
     "placement_policy_required": false,
     "profile": "tpu-v5e-8x8",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 64,
     "total_nodes": 16,
     "tpu_topology": "8x8"
    }
   }
  },
  "tpu-v5p-16x16x16": {
   "alias": "tpu-v5p-4096",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v5p-slice",
     "hostsPerSlice": 1024,
     "kind": "tpu",
     "machineType": "ct5p-hightpu-4t",
     "peakTflops": 459.0,
     "rayAcceleratorType": "TPU-V5P",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "16x16x16"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v5p-16x16x16",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 4096,
       "cpu": 8192,
       "memory": "16384Gi"
      },
      "onDemand": {
       "accelerator": 4096,
       "cpu": 8192,
       "memory": "16384Gi"
      }
     }
    }
   },
   "machine_type": "ct5p-hightpu-4t",
   "node_pools": {
    "ct5p-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 4096,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v5p",
     "gke_accelerator": "tpu-v5p-slice",
     "hosts_per_slice": 1024,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct5p-hightpu-4t",
     "max_nodes": 1024,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice",
      "cloud.google.com/gke-tpu-topology": "16x16x16"
     },
     "nodes_per_slice": 1024,
     "placement_policy_required": false,
     "profile": "tpu-v5p-16x16x16",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 4096,
     "total_nodes": 1024,
     "tpu_topology": "16x16x16"
    }
   }
  },
  "tpu-v5p-2x2x1": {
   "alias": "tpu-v5p-4",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v5p-slice",
     "hostsPerSlice": 1,
     "kind": "tpu",
     "machineType": "ct5p-hightpu-4t",
     "peakTflops": 459.0,
     "rayAcceleratorType": "TPU-V5P",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "2x2x1"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v5p-2x2x1",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 4,
       "cpu": 8,
       "memory": "16Gi"
      },
      "onDemand": {
       "accelerator": 4,
       "cpu": 8,
       "memory": "16Gi"
      }
     }
    }
   },
   "machine_type": "ct5p-hightpu-4t",
   "node_pools": {
    "ct5p-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 4,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v5p",
     "gke_accelerator": "tpu-v5p-slice",
     "hosts_per_slice": 1,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct5p-hightpu-4t",
     "max_nodes": 1,
     "min_nodes": 0,
     "multi_host": false,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice",
      "cloud.google.com/gke-tpu-topology": "2x2x1"
     },
     "nodes_per_slice": 1,
     "placement_policy_required": false,
     "profile": "tpu-v5p-2x2x1",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 4,
     "total_nodes": 1,
     "tpu_topology": "2x2x1"
    }
   }
  },
  "tpu-v5p-2x2x2": {
   "alias": "tpu-v5p-8",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v5p-slice",
     "hostsPerSlice": 2,
     "kind": "tpu",
     "machineType": "ct5p-hightpu-4t",
     "peakTflops": 459.0,
     "rayAcceleratorType": "TPU-V5P",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "2x2x2"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v5p-2x2x2",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 8,
       "cpu": 16,
       "memory": "32Gi"
      },
      "onDemand": {
       "accelerator": 8,
       "cpu": 16,
       "memory": "32Gi"
      }
     }
    }
   },
   "machine_type": "ct5p-hightpu-4t",
   "node_pools": {
    "ct5p-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 8,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v5p",
     "gke_accelerator": "tpu-v5p-slice",
     "hosts_per_slice": 2,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct5p-hightpu-4t",
     "max_nodes": 2,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice",
      "cloud.google.com/gke-tpu-topology": "2x2x2"
     },
     "nodes_per_slice": 2,
     "placement_policy_required": false,
     "profile": "tpu-v5p-2x2x2",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 8,
     "total_nodes": 2,
     "tpu_topology": "2x2x2"
    }
   }
  },
  "tpu-v5p-2x2x4": {
   "alias": "tpu-v5p-16",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v5p-slice",
     "hostsPerSlice": 4,
     "kind": "tpu",
     "machineType": "ct5p-hightpu-4t",
     "peakTflops": 459.0,
     "rayAcceleratorType": "TPU-V5P",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "2x2x4"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v5p-2x2x4",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 16,
       "cpu": 32,
       "memory": "64Gi"
      },
      "onDemand": {
       "accelerator": 16,
       "cpu": 32,
       "memory": "64Gi"
      }
     }
    }
   },
   "machine_type": "ct5p-hightpu-4t",
   "node_pools": {
    "ct5p-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 16,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v5p",
     "gke_accelerator": "tpu-v5p-slice",
     "hosts_per_slice": 4,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct5p-hightpu-4t",
     "max_nodes": 4,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice",
      "cloud.google.com/gke-tpu-topology": "2x2x4"
     },
     "nodes_per_slice": 4,
     "placement_policy_required": false,
     "profile": "tpu-v5p-2x2x4",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 16,
     "total_nodes": 4,
     "tpu_topology": "2x2x4"
    }
   }
  },
  "tpu-v5p-2x4x4": {
   "alias": "tpu-v5p-32",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v5p-slice",
     "hostsPerSlice": 8,
     "kind": "tpu",
     "machineType": "ct5p-hightpu-4t",
     "peakTflops": 459.0,
     "rayAcceleratorType": "TPU-V5P",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "2x4x4"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v5p-2x4x4",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 32,
       "cpu": 64,
       "memory": "128Gi"
      },
      "onDemand": {
       "accelerator": 32,
       "cpu": 64,
       "memory": "128Gi"
      }
     }
    }
   },
   "machine_type": "ct5p-hightpu-4t",
   "node_pools": {
    "ct5p-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 32,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v5p",
     "gke_accelerator": "tpu-v5p-slice",
     "hosts_per_slice": 8,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct5p-hightpu-4t",
     "max_nodes": 8,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice",
      "cloud.google.com/gke-tpu-topology": "2x4x4"
     },
     "nodes_per_slice": 8,
     "placement_policy_required": false,
     "profile": "tpu-v5p-2x4x4",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 32,
     "total_nodes": 8,
     "tpu_topology": "2x4x4"
    }
   }
  },
  "tpu-v5p-4x4x4": {
   "alias": "tpu-v5p-64",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v5p-slice",
     "hostsPerSlice": 16,
     "kind": "tpu",
     "machineType": "ct5p-hightpu-4t",
     "peakTflops": 459.0,
     "rayAcceleratorType": "TPU-V5P",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "4x4x4"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v5p-4x4x4",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 64,
       "cpu": 128,
       "memory": "256Gi"
      },
      "onDemand": {
       "accelerator": 64,
       "cpu": 128,
       "memory": "256Gi"
      }
     }
    }
   },
   "machine_type": "ct5p-hightpu-4t",
   "node_pools": {
    "ct5p-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 64,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v5p",
     "gke_accelerator": "tpu-v5p-slice",
     "hosts_per_slice": 16,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct5p-hightpu-4t",
     "max_nodes": 16,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice",
      "cloud.google.com/gke-tpu-topology": "4x4x4"
     },
     "nodes_per_slice": 16,
     "placement_policy_required": false,
     "profile": "tpu-v5p-4x4x4",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 64,
     "total_nodes": 16,
     "tpu_topology": "4x4x4"
    }
   }
  },
  "tpu-v5p-4x4x8": {
   "alias": "tpu-v5p-128",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v5p-slice",
     "hostsPerSlice": 32,
     "kind": "tpu",
     "machineType": "ct5p-hightpu-4t",
     "peakTflops": 459.0,
     "rayAcceleratorType": "TPU-V5P",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "4x4x8"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v5p-4x4x8",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 128,
       "cpu": 256,
       "memory": "512Gi"
      },
      "onDemand": {
       "accelerator": 128,
       "cpu": 256,
       "memory": "512Gi"
      }
     }
    }
   },
   "machine_type": "ct5p-hightpu-4t",
   "node_pools": {
    "ct5p-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 128,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v5p",
     "gke_accelerator": "tpu-v5p-slice",
     "hosts_per_slice": 32,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct5p-hightpu-4t",
     "max_nodes": 32,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice",
      "cloud.google.com/gke-tpu-topology": "4x4x8"
     },
     "nodes_per_slice": 32,
     "placement_policy_required": false,
     "profile": "tpu-v5p-4x4x8",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 128,
     "total_nodes": 32,
     "tpu_topology": "4x4x8"
    }
   }
  },
  "tpu-v5p-4x8x8": {
   "alias": "tpu-v5p-256",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v5p-slice",
     "hostsPerSlice": 64,
     "kind": "tpu",
     "machineType": "ct5p-hightpu-4t",
     "peakTflops": 459.0,
     "rayAcceleratorType": "TPU-V5P",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "4x8x8"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v5p-4x8x8",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 256,
       "cpu": 512,
       "memory": "1024Gi"
      },
      "onDemand": {
       "accelerator": 256,
       "cpu": 512,
       "memory": "1024Gi"
      }
     }
    }
   },
   "machine_type": "ct5p-hightpu-4t",
   "node_pools": {
    "ct5p-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 256,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v5p",
     "gke_accelerator": "tpu-v5p-slice",
     "hosts_per_slice": 64,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct5p-hightpu-4t",
     "max_nodes": 64,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice",
      "cloud.google.com/gke-tpu-topology": "4x8x8"
     },
     "nodes_per_slice": 64,
     "placement_policy_required": false,
     "profile": "tpu-v5p-4x8x8",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 256,
     "total_nodes": 64,
     "tpu_topology": "4x8x8"
    }
   }
  },
  "tpu-v5p-8x16x16": {
   "alias": "tpu-v5p-2048",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v5p-slice",
     "hostsPerSlice": 512,
     "kind": "tpu",
     "machineType": "ct5p-hightpu-4t",
     "peakTflops": 459.0,
     "rayAcceleratorType": "TPU-V5P",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "8x16x16"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v5p-8x16x16",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 2048,
       "cpu": 4096,
       "memory": "8192Gi"
      },
      "onDemand": {
       "accelerator": 2048,
       "cpu": 4096,
       "memory": "8192Gi"
      }
     }
    }
   },
   "machine_type": "ct5p-hightpu-4t",
   "node_pools": {
    "ct5p-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 2048,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v5p",
     "gke_accelerator": "tpu-v5p-slice",
     "hosts_per_slice": 512,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct5p-hightpu-4t",
     "max_nodes": 512,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice",
      "cloud.google.com/gke-tpu-topology": "8x16x16"
     },
     "nodes_per_slice": 512,
     "placement_policy_required": false,
     "profile": "tpu-v5p-8x16x16",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 2048,
     "total_nodes": 512,
     "tpu_topology": "8x16x16"
    }
   }
  },
  "tpu-v5p-8x8x16": {
   "alias": "tpu-v5p-1024",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v5p-slice",
     "hostsPerSlice": 256,
     "kind": "tpu",
     "machineType": "ct5p-hightpu-4t",
     "peakTflops": 459.0,
     "rayAcceleratorType": "TPU-V5P",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "8x8x16"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v5p-8x8x16",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 1024,
       "cpu": 2048,
       "memory": "4096Gi"
      },
      "onDemand": {
       "accelerator": 1024,
       "cpu": 2048,
       "memory": "4096Gi"
      }
     }
    }
   },
   "machine_type": "ct5p-hightpu-4t",
   "node_pools": {
    "ct5p-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 1024,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v5p",
     "gke_accelerator": "tpu-v5p-slice",
     "hosts_per_slice": 256,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct5p-hightpu-4t",
     "max_nodes": 256,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice",
      "cloud.google.com/gke-tpu-topology": "8x8x16"
     },
     "nodes_per_slice": 256,
     "placement_policy_required": false,
     "profile": "tpu-v5p-8x8x16",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 1024,
     "total_nodes": 256,
     "tpu_topology": "8x8x16"
    }
   }
  },
  "tpu-v5p-8x8x8": {
   "alias": "tpu-v5p-512",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v5p-slice",
     "hostsPerSlice": 128,
     "kind": "tpu",
     "machineType": "ct5p-hightpu-4t",
     "peakTflops": 459.0,
     "rayAcceleratorType": "TPU-V5P",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "8x8x8"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v5p-8x8x8",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 512,
       "cpu": 1024,
       "memory": "2048Gi"
      },
      "onDemand": {
       "accelerator": 512,
       "cpu": 1024,
       "memory": "2048Gi"
      }
     }
    }
   },
   "machine_type": "ct5p-hightpu-4t",
   "node_pools": {
    "ct5p-hightpu-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 512,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v5p",
     "gke_accelerator": "tpu-v5p-slice",
     "hosts_per_slice": 128,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct5p-hightpu-4t",
     "max_nodes": 128,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice",
      "cloud.google.com/gke-tpu-topology": "8x8x8"
     },
     "nodes_per_slice": 128,
     "placement_policy_required": false,
     "profile": "tpu-v5p-8x8x8",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 512,
     "total_nodes": 128,
     "tpu_topology": "8x8x8"
    }
   }
  },
  "tpu-v6e-16x16": {
   "alias": "tpu-v6e-256",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v6e-slice",
     "hostsPerSlice": 64,
     "kind": "tpu",
     "machineType": "ct6e-standard-4t",
     "peakTflops": 918.0,
     "rayAcceleratorType": "TPU-V6E",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "16x16"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v6e-16x16",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 256,
       "cpu": 512,
       "memory": "1024Gi"
      },
      "onDemand": {
       "accelerator": 256,
       "cpu": 512,
       "memory": "1024Gi"
      }
     }
    }
   },
   "machine_type": "ct6e-standard-4t",
   "node_pools": {
    "ct6e-standard-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 256,
     "doc_url": "https://cloud.google.com/tpu/docs/v6e",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v6e",
     "gke_accelerator": "tpu-v6e-slice",
     "hosts_per_slice": 64,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct6e-standard-4t",
     "max_nodes": 64,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
      "cloud.google.com/gke-tpu-topology": "16x16"
     },
     "nodes_per_slice": 64,
     "placement_policy_required": false,
     "profile": "tpu-v6e-16x16",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 256,
     "total_nodes": 64,
     "tpu_topology": "16x16"
    }
   }
  },
  "tpu-v6e-1x1": {
   "alias": "tpu-v6e-1",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 1,
     "gkeAccelerator": "tpu-v6e-slice",
     "hostsPerSlice": 1,
     "kind": "tpu",
     "machineType": "ct6e-standard-1t",
     "peakTflops": 918.0,
     "rayAcceleratorType": "TPU-V6E",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "1x1"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "2",
       "memory": "4Gi"
      }
     }
    },
    "profile": "tpu-v6e-1x1",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 1,
       "cpu": 2,
       "memory": "4Gi"
      },
      "onDemand": {
       "accelerator": 1,
       "cpu": 2,
       "memory": "4Gi"
      }
     }
    }
   },
   "machine_type": "ct6e-standard-1t",
   "node_pools": {
    "ct6e-standard-1t": {
     "accelerator_count": 1,
     "chips_per_slice": 1,
     "doc_url": "https://cloud.google.com/tpu/docs/v6e",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v6e",
     "gke_accelerator": "tpu-v6e-slice",
     "hosts_per_slice": 1,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct6e-standard-1t",
     "max_nodes": 1,
     "min_nodes": 0,
     "multi_host": false,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
      "cloud.google.com/gke-tpu-topology": "1x1"
     },
     "nodes_per_slice": 1,
     "placement_policy_required": false,
     "profile": "tpu-v6e-1x1",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 1,
     "total_nodes": 1,
     "tpu_topology": "1x1"
    }
   }
  },
  "tpu-v6e-2x2": {
   "alias": "tpu-v6e-4",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v6e-slice",
     "hostsPerSlice": 1,
     "kind": "tpu",
     "machineType": "ct6e-standard-4t",
     "peakTflops": 918.0,
     "rayAcceleratorType": "TPU-V6E",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "2x2"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v6e-2x2",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 4,
       "cpu": 8,
       "memory": "16Gi"
      },
      "onDemand": {
       "accelerator": 4,
       "cpu": 8,
       "memory": "16Gi"
      }
     }
    }
   },
   "machine_type": "ct6e-standard-4t",
   "node_pools": {
    "ct6e-standard-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 4,
     "doc_url": "https://cloud.google.com/tpu/docs/v6e",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v6e",
     "gke_accelerator": "tpu-v6e-slice",
     "hosts_per_slice": 1,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct6e-standard-4t",
     "max_nodes": 1,
     "min_nodes": 0,
     "multi_host": false,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
      "cloud.google.com/gke-tpu-topology": "2x2"
     },
     "nodes_per_slice": 1,
     "placement_policy_required": false,
     "profile": "tpu-v6e-2x2",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 4,
     "total_nodes": 1,
     "tpu_topology": "2x2"
    }
   }
  },
  "tpu-v6e-2x4": {
   "alias": "tpu-v6e-8",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 8,
     "gkeAccelerator": "tpu-v6e-slice",
     "hostsPerSlice": 1,
     "kind": "tpu",
     "machineType": "ct6e-standard-8t",
     "peakTflops": 918.0,
     "rayAcceleratorType": "TPU-V6E",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "2x4"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "16",
       "memory": "32Gi"
      }
     }
    },
    "profile": "tpu-v6e-2x4",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 8,
       "cpu": 16,
       "memory": "32Gi"
      },
      "onDemand": {
       "accelerator": 8,
       "cpu": 16,
       "memory": "32Gi"
      }
     }
    }
   },
   "machine_type": "ct6e-standard-8t",
   "node_pools": {
    "ct6e-standard-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 8,
     "doc_url": "https://cloud.google.com/tpu/docs/v6e",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v6e",
     "gke_accelerator": "tpu-v6e-slice",
     "hosts_per_slice": 2,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct6e-standard-4t",
     "max_nodes": 2,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
      "cloud.google.com/gke-tpu-topology": "2x4"
     },
     "nodes_per_slice": 2,
     "placement_policy_required": false,
     "profile": "tpu-v6e-2x4",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 8,
     "total_nodes": 2,
     "tpu_topology": "2x4"
    },
    "ct6e-standard-8t": {
     "accelerator_count": 8,
     "chips_per_slice": 8,
     "doc_url": "https://cloud.google.com/tpu/docs/v6e",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v6e",
     "gke_accelerator": "tpu-v6e-slice",
     "hosts_per_slice": 1,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct6e-standard-8t",
     "max_nodes": 1,
     "min_nodes": 0,
     "multi_host": false,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
      "cloud.google.com/gke-tpu-topology": "2x4"
     },
     "nodes_per_slice": 1,
     "placement_policy_required": false,
     "profile": "tpu-v6e-2x4",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 8,
     "total_nodes": 1,
     "tpu_topology": "2x4"
    }
   }
  },
  "tpu-v6e-4x4": {
   "alias": "tpu-v6e-16",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v6e-slice",
     "hostsPerSlice": 4,
     "kind": "tpu",
     "machineType": "ct6e-standard-4t",
     "peakTflops": 918.0,
     "rayAcceleratorType": "TPU-V6E",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "4x4"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v6e-4x4",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 16,
       "cpu": 32,
       "memory": "64Gi"
      },
      "onDemand": {
       "accelerator": 16,
       "cpu": 32,
       "memory": "64Gi"
      }
     }
    }
   },
   "machine_type": "ct6e-standard-4t",
   "node_pools": {
    "ct6e-standard-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 16,
     "doc_url": "https://cloud.google.com/tpu/docs/v6e",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v6e",
     "gke_accelerator": "tpu-v6e-slice",
     "hosts_per_slice": 4,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct6e-standard-4t",
     "max_nodes": 4,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
      "cloud.google.com/gke-tpu-topology": "4x4"
     },
     "nodes_per_slice": 4,
     "placement_policy_required": false,
     "profile": "tpu-v6e-4x4",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 16,
     "total_nodes": 4,
     "tpu_topology": "4x4"
    }
   }
  },
  "tpu-v6e-4x8": {
   "alias": "tpu-v6e-32",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v6e-slice",
     "hostsPerSlice": 8,
     "kind": "tpu",
     "machineType": "ct6e-standard-4t",
     "peakTflops": 918.0,
     "rayAcceleratorType": "TPU-V6E",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "4x8"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v6e-4x8",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 32,
       "cpu": 64,
       "memory": "128Gi"
      },
      "onDemand": {
       "accelerator": 32,
       "cpu": 64,
       "memory": "128Gi"
      }
     }
    }
   },
   "machine_type": "ct6e-standard-4t",
   "node_pools": {
    "ct6e-standard-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 32,
     "doc_url": "https://cloud.google.com/tpu/docs/v6e",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v6e",
     "gke_accelerator": "tpu-v6e-slice",
     "hosts_per_slice": 8,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct6e-standard-4t",
     "max_nodes": 8,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
      "cloud.google.com/gke-tpu-topology": "4x8"
     },
     "nodes_per_slice": 8,
     "placement_policy_required": false,
     "profile": "tpu-v6e-4x8",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 32,
     "total_nodes": 8,
     "tpu_topology": "4x8"
    }
   }
  },
  "tpu-v6e-8x16": {
   "alias": "tpu-v6e-128",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v6e-slice",
     "hostsPerSlice": 32,
     "kind": "tpu",
     "machineType": "ct6e-standard-4t",
     "peakTflops": 918.0,
     "rayAcceleratorType": "TPU-V6E",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "8x16"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v6e-8x16",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 128,
       "cpu": 256,
       "memory": "512Gi"
      },
      "onDemand": {
       "accelerator": 128,
       "cpu": 256,
       "memory": "512Gi"
      }
     }
    }
   },
   "machine_type": "ct6e-standard-4t",
   "node_pools": {
    "ct6e-standard-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 128,
     "doc_url": "https://cloud.google.com/tpu/docs/v6e",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v6e",
     "gke_accelerator": "tpu-v6e-slice",
     "hosts_per_slice": 32,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct6e-standard-4t",
     "max_nodes": 32,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
      "cloud.google.com/gke-tpu-topology": "8x16"
     },
     "nodes_per_slice": 32,
     "placement_policy_required": false,
     "profile": "tpu-v6e-8x16",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 128,
     "total_nodes": 32,
     "tpu_topology": "8x16"
    }
   }
  },
  "tpu-v6e-8x8": {
   "alias": "tpu-v6e-64",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu-v6e-slice",
     "hostsPerSlice": 16,
     "kind": "tpu",
     "machineType": "ct6e-standard-4t",
     "peakTflops": 918.0,
     "rayAcceleratorType": "TPU-V6E",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "8x8"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu-v6e-8x8",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 64,
       "cpu": 128,
       "memory": "256Gi"
      },
      "onDemand": {
       "accelerator": 64,
       "cpu": 128,
       "memory": "256Gi"
      }
     }
    }
   },
   "machine_type": "ct6e-standard-4t",
   "node_pools": {
    "ct6e-standard-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 64,
     "doc_url": "https://cloud.google.com/tpu/docs/v6e",
     "flex_start": false,
     "flex_start_supported": true,
     "generation": "v6e",
     "gke_accelerator": "tpu-v6e-slice",
     "hosts_per_slice": 16,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "ct6e-standard-4t",
     "max_nodes": 16,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
      "cloud.google.com/gke-tpu-topology": "8x8"
     },
     "nodes_per_slice": 16,
     "placement_policy_required": false,
     "profile": "tpu-v6e-8x8",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 64,
     "total_nodes": 16,
     "tpu_topology": "8x8"
    }
   }
  },
  "tpu7x-2x2x1": {
   "alias": "tpu7x-4",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu7x",
     "hostsPerSlice": 1,
     "kind": "tpu",
     "machineType": "tpu7x-standard-4t",
     "peakTflops": 2307.0,
     "rayAcceleratorType": "TPU-V7X",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "2x2x1"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu7x-2x2x1",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 4,
       "cpu": 8,
       "memory": "16Gi"
      },
      "onDemand": {
       "accelerator": 4,
       "cpu": 8,
       "memory": "16Gi"
      }
     }
    }
   },
   "machine_type": "tpu7x-standard-4t",
   "node_pools": {
    "tpu7x-standard-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 4,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood",
     "flex_start": false,
     "flex_start_supported": false,
     "generation": "tpu7x",
     "gke_accelerator": "tpu7x",
     "hosts_per_slice": 1,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "tpu7x-standard-4t",
     "max_nodes": 1,
     "min_nodes": 0,
     "multi_host": false,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu7x",
      "cloud.google.com/gke-tpu-topology": "2x2x1"
     },
     "nodes_per_slice": 1,
     "placement_policy_required": false,
     "profile": "tpu7x-2x2x1",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 4,
     "total_nodes": 1,
     "tpu_topology": "2x2x1"
    }
   }
  },
  "tpu7x-2x2x2": {
   "alias": "tpu7x-8",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu7x",
     "hostsPerSlice": 2,
     "kind": "tpu",
     "machineType": "tpu7x-standard-4t",
     "peakTflops": 2307.0,
     "rayAcceleratorType": "TPU-V7X",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "2x2x2"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu7x-2x2x2",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 8,
       "cpu": 16,
       "memory": "32Gi"
      },
      "onDemand": {
       "accelerator": 8,
       "cpu": 16,
       "memory": "32Gi"
      }
     }
    }
   },
   "machine_type": "tpu7x-standard-4t",
   "node_pools": {
    "tpu7x-standard-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 8,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood",
     "flex_start": false,
     "flex_start_supported": false,
     "generation": "tpu7x",
     "gke_accelerator": "tpu7x",
     "hosts_per_slice": 2,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "tpu7x-standard-4t",
     "max_nodes": 2,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu7x",
      "cloud.google.com/gke-tpu-topology": "2x2x2"
     },
     "nodes_per_slice": 2,
     "placement_policy_required": true,
     "profile": "tpu7x-2x2x2",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 8,
     "total_nodes": 2,
     "tpu_topology": "2x2x2"
    }
   }
  },
  "tpu7x-2x2x4": {
   "alias": "tpu7x-16",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu7x",
     "hostsPerSlice": 4,
     "kind": "tpu",
     "machineType": "tpu7x-standard-4t",
     "peakTflops": 2307.0,
     "rayAcceleratorType": "TPU-V7X",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "2x2x4"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu7x-2x2x4",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 16,
       "cpu": 32,
       "memory": "64Gi"
      },
      "onDemand": {
       "accelerator": 16,
       "cpu": 32,
       "memory": "64Gi"
      }
     }
    }
   },
   "machine_type": "tpu7x-standard-4t",
   "node_pools": {
    "tpu7x-standard-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 16,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood",
     "flex_start": false,
     "flex_start_supported": false,
     "generation": "tpu7x",
     "gke_accelerator": "tpu7x",
     "hosts_per_slice": 4,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "tpu7x-standard-4t",
     "max_nodes": 4,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu7x",
      "cloud.google.com/gke-tpu-topology": "2x2x4"
     },
     "nodes_per_slice": 4,
     "placement_policy_required": true,
     "profile": "tpu7x-2x2x4",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 16,
     "total_nodes": 4,
     "tpu_topology": "2x2x4"
    }
   }
  },
  "tpu7x-2x4x4": {
   "alias": "tpu7x-32",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu7x",
     "hostsPerSlice": 8,
     "kind": "tpu",
     "machineType": "tpu7x-standard-4t",
     "peakTflops": 2307.0,
     "rayAcceleratorType": "TPU-V7X",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "2x4x4"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu7x-2x4x4",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 32,
       "cpu": 64,
       "memory": "128Gi"
      },
      "onDemand": {
       "accelerator": 32,
       "cpu": 64,
       "memory": "128Gi"
      }
     }
    }
   },
   "machine_type": "tpu7x-standard-4t",
   "node_pools": {
    "tpu7x-standard-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 32,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood",
     "flex_start": false,
     "flex_start_supported": false,
     "generation": "tpu7x",
     "gke_accelerator": "tpu7x",
     "hosts_per_slice": 8,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "tpu7x-standard-4t",
     "max_nodes": 8,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu7x",
      "cloud.google.com/gke-tpu-topology": "2x4x4"
     },
     "nodes_per_slice": 8,
     "placement_policy_required": true,
     "profile": "tpu7x-2x4x4",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 32,
     "total_nodes": 8,
     "tpu_topology": "2x4x4"
    }
   }
  },
  "tpu7x-4x4x4": {
   "alias": "tpu7x-64",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu7x",
     "hostsPerSlice": 16,
     "kind": "tpu",
     "machineType": "tpu7x-standard-4t",
     "peakTflops": 2307.0,
     "rayAcceleratorType": "TPU-V7X",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "4x4x4"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu7x-4x4x4",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 64,
       "cpu": 128,
       "memory": "256Gi"
      },
      "onDemand": {
       "accelerator": 64,
       "cpu": 128,
       "memory": "256Gi"
      }
     }
    }
   },
   "machine_type": "tpu7x-standard-4t",
   "node_pools": {
    "tpu7x-standard-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 64,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood",
     "flex_start": false,
     "flex_start_supported": false,
     "generation": "tpu7x",
     "gke_accelerator": "tpu7x",
     "hosts_per_slice": 16,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "tpu7x-standard-4t",
     "max_nodes": 16,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu7x",
      "cloud.google.com/gke-tpu-topology": "4x4x4"
     },
     "nodes_per_slice": 16,
     "placement_policy_required": true,
     "profile": "tpu7x-4x4x4",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 64,
     "total_nodes": 16,
     "tpu_topology": "4x4x4"
    }
   }
  },
  "tpu7x-4x4x8": {
   "alias": "tpu7x-128",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu7x",
     "hostsPerSlice": 32,
     "kind": "tpu",
     "machineType": "tpu7x-standard-4t",
     "peakTflops": 2307.0,
     "rayAcceleratorType": "TPU-V7X",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "4x4x8"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu7x-4x4x8",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 128,
       "cpu": 256,
       "memory": "512Gi"
      },
      "onDemand": {
       "accelerator": 128,
       "cpu": 256,
       "memory": "512Gi"
      }
     }
    }
   },
   "machine_type": "tpu7x-standard-4t",
   "node_pools": {
    "tpu7x-standard-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 128,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood",
     "flex_start": false,
     "flex_start_supported": false,
     "generation": "tpu7x",
     "gke_accelerator": "tpu7x",
     "hosts_per_slice": 32,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "tpu7x-standard-4t",
     "max_nodes": 32,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu7x",
      "cloud.google.com/gke-tpu-topology": "4x4x8"
     },
     "nodes_per_slice": 32,
     "placement_policy_required": true,
     "profile": "tpu7x-4x4x8",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 128,
     "total_nodes": 32,
     "tpu_topology": "4x4x8"
    }
   }
  },
  "tpu7x-4x8x8": {
   "alias": "tpu7x-256",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu7x",
     "hostsPerSlice": 64,
     "kind": "tpu",
     "machineType": "tpu7x-standard-4t",
     "peakTflops": 2307.0,
     "rayAcceleratorType": "TPU-V7X",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "4x8x8"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu7x-4x8x8",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 256,
       "cpu": 512,
       "memory": "1024Gi"
      },
      "onDemand": {
       "accelerator": 256,
       "cpu": 512,
       "memory": "1024Gi"
      }
     }
    }
   },
   "machine_type": "tpu7x-standard-4t",
   "node_pools": {
    "tpu7x-standard-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 256,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood",
     "flex_start": false,
     "flex_start_supported": false,
     "generation": "tpu7x",
     "gke_accelerator": "tpu7x",
     "hosts_per_slice": 64,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "tpu7x-standard-4t",
     "max_nodes": 64,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu7x",
      "cloud.google.com/gke-tpu-topology": "4x8x8"
     },
     "nodes_per_slice": 64,
     "placement_policy_required": true,
     "profile": "tpu7x-4x8x8",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 256,
     "total_nodes": 64,
     "tpu_topology": "4x8x8"
    }
   }
  },
  "tpu7x-8x16x16": {
   "alias": "tpu7x-2048",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu7x",
     "hostsPerSlice": 512,
     "kind": "tpu",
     "machineType": "tpu7x-standard-4t",
     "peakTflops": 2307.0,
     "rayAcceleratorType": "TPU-V7X",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "8x16x16"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu7x-8x16x16",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 2048,
       "cpu": 4096,
       "memory": "8192Gi"
      },
      "onDemand": {
       "accelerator": 2048,
       "cpu": 4096,
       "memory": "8192Gi"
      }
     }
    }
   },
   "machine_type": "tpu7x-standard-4t",
   "node_pools": {
    "tpu7x-standard-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 2048,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood",
     "flex_start": false,
     "flex_start_supported": false,
     "generation": "tpu7x",
     "gke_accelerator": "tpu7x",
     "hosts_per_slice": 512,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "tpu7x-standard-4t",
     "max_nodes": 512,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu7x",
      "cloud.google.com/gke-tpu-topology": "8x16x16"
     },
     "nodes_per_slice": 512,
     "placement_policy_required": true,
     "profile": "tpu7x-8x16x16",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 2048,
     "total_nodes": 512,
     "tpu_topology": "8x16x16"
    }
   }
  },
  "tpu7x-8x8x16": {
   "alias": "tpu7x-1024",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu7x",
     "hostsPerSlice": 256,
     "kind": "tpu",
     "machineType": "tpu7x-standard-4t",
     "peakTflops": 2307.0,
     "rayAcceleratorType": "TPU-V7X",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "8x8x16"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu7x-8x8x16",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 1024,
       "cpu": 2048,
       "memory": "4096Gi"
      },
      "onDemand": {
       "accelerator": 1024,
       "cpu": 2048,
       "memory": "4096Gi"
      }
     }
    }
   },
   "machine_type": "tpu7x-standard-4t",
   "node_pools": {
    "tpu7x-standard-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 1024,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood",
     "flex_start": false,
     "flex_start_supported": false,
     "generation": "tpu7x",
     "gke_accelerator": "tpu7x",
     "hosts_per_slice": 256,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "tpu7x-standard-4t",
     "max_nodes": 256,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu7x",
      "cloud.google.com/gke-tpu-topology": "8x8x16"
     },
     "nodes_per_slice": 256,
     "placement_policy_required": true,
     "profile": "tpu7x-8x8x16",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 1024,
     "total_nodes": 256,
     "tpu_topology": "8x8x16"
    }
   }
  },
  "tpu7x-8x8x8": {
   "alias": "tpu7x-512",
   "chart_values": {
    "accelerator": {
     "chipsPerHost": 4,
     "gkeAccelerator": "tpu7x",
     "hostsPerSlice": 128,
     "kind": "tpu",
     "machineType": "tpu7x-standard-4t",
     "peakTflops": 2307.0,
     "rayAcceleratorType": "TPU-V7X",
     "resource": "google.com/tpu",
     "tolerations": [
      {
       "effect": "NoSchedule",
       "key": "google.com/tpu",
       "operator": "Exists"
      },
      {
       "effect": "NoSchedule",
       "key": "cloud.google.com/gke-queued",
       "operator": "Exists"
      }
     ],
     "topology": "8x8x8"
    },
    "job": {
     "image": "rayproject/ray:2.53.0-py311",
     "pip": [
      "jax[tpu]==0.8.2",
      "pandas==2.3.3",
      "flax==0.12.2",
      "optax==0.2.6",
      "orbax-checkpoint==0.11.28",
      "gcsfs==2026.10.1"
     ],
     "rayVersion": "2.53.0",
     "training": {
      "transformer": {
       "batchPerDevice": 8,
       "dModel": 2048,
       "numHeads": 16,
       "numLayers": 8,
       "remat": "none",
       "seqLen": 2048,
       "vocabSize": 32768
      }
     },
     "workers": {
      "replicas": 1,
      "resources": {
       "cpu": "8",
       "memory": "16Gi"
      }
     }
    },
    "profile": "tpu7x-8x8x8",
    "queues": {
     "quotas": {
      "dws": {
       "accelerator": 512,
       "cpu": 1024,
       "memory": "2048Gi"
      },
      "onDemand": {
       "accelerator": 512,
       "cpu": 1024,
       "memory": "2048Gi"
      }
     }
    }
   },
   "machine_type": "tpu7x-standard-4t",
   "node_pools": {
    "tpu7x-standard-4t": {
     "accelerator_count": 4,
     "chips_per_slice": 512,
     "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood",
     "flex_start": false,
     "flex_start_supported": false,
     "generation": "tpu7x",
     "gke_accelerator": "tpu7x",
     "hosts_per_slice": 128,
     "initial_nodes": 0,
     "kind": "tpu",
     "machine_type": "tpu7x-standard-4t",
     "max_nodes": 128,
     "min_nodes": 0,
     "multi_host": true,
     "node_labels": {
      "cloud.google.com/gke-tpu-accelerator": "tpu7x",
      "cloud.google.com/gke-tpu-topology": "8x8x8"
     },
     "nodes_per_slice": 128,
     "placement_policy_required": true,
     "profile": "tpu7x-8x8x8",
     "resource_name": "google.com/tpu",
     "slices": 1,
     "total_chips": 512,
     "total_nodes": 128,
     "tpu_topology": "8x8x8"
    }
   }
  }
 }
}
"""
)
