"""Why a pod is pending: HAMi's scheduling events read and joined with the allocation picture.

``reasons`` holds HAMi's reason codes in plain words; ``events`` reads the event messages the
scheduler writes; ``describe`` reads a pasted ``kubectl describe pod`` or ``kubectl get events``;
``crosscheck`` compares each reason with the current allocation; ``story`` puts them together.
"""
