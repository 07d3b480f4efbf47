"""Makes signxml-response.xml: a SAML response whose assertion is signed by signxml (lxml's
libxml2 canonicalization), an implementation independent of quire's, with the test identity
provider's key (../../../../quire-server/tests/api/fixtures/saml/idp-key.pem).

    python3 -m venv /tmp/sx && /tmp/sx/bin/pip install signxml==4.* lxml
    /tmp/sx/bin/python sign.py KEY.pem idp-cert.pem > signxml-response.xml
"""
import sys

from lxml import etree
from signxml import XMLSigner, methods

RESPONSE = """<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ID="_resp1" Version="2.0" IssueInstant="2026-11-29T12:00:00Z" Destination="https://quire.test/acs" InResponseTo="_req1">
  <saml:Issuer>https://idp.test/metadata</saml:Issuer>
  <samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>
  <saml:Assertion ID="_assert1" Version="2.0" IssueInstant="2026-11-29T12:00:00Z">
    <saml:Issuer>https://idp.test/metadata</saml:Issuer>
    <saml:Subject>
      <saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">ada@example.com</saml:NameID>
      <saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">
        <saml:SubjectConfirmationData InResponseTo="_req1" NotOnOrAfter="2026-11-29T12:05:00Z" Recipient="https://quire.test/acs"/>
      </saml:SubjectConfirmation>
    </saml:Subject>
    <saml:Conditions NotBefore="2026-11-29T11:59:00Z" NotOnOrAfter="2026-11-29T12:05:00Z">
      <saml:AudienceRestriction><saml:Audience>https://quire.test/metadata</saml:Audience></saml:AudienceRestriction>
    </saml:Conditions>
    <saml:AttributeStatement>
      <saml:Attribute Name="displayName"><saml:AttributeValue xsi:type="xs:string">Ada &amp; Lovelace &lt;ada&gt; "quoted"\tTab</saml:AttributeValue></saml:Attribute>
      <saml:Attribute Name="groups"><saml:AttributeValue xsi:type="xs:string">engineering</saml:AttributeValue><saml:AttributeValue xsi:type="xs:string">caf\u00e9</saml:AttributeValue></saml:Attribute>
    </saml:AttributeStatement>
  </saml:Assertion>
</samlp:Response>"""

key = open(sys.argv[1], "rb").read()
cert = open(sys.argv[2], "rb").read()
root = etree.fromstring(RESPONSE.encode())
assertion = root.find("{urn:oasis:names:tc:SAML:2.0:assertion}Assertion")
signer = XMLSigner(
    method=methods.enveloped,
    signature_algorithm="rsa-sha256",
    digest_algorithm="sha256",
    c14n_algorithm="http://www.w3.org/2001/10/xml-exc-c14n#",
)
signer.namespaces = {"ds": "http://www.w3.org/2000/09/xmldsig#"}
signed = signer.sign(assertion, key=key, cert=cert, reference_uri="_assert1")
# The signature goes after the assertion's Issuer, where SAML's schema puts it.
signature = signed.find("{http://www.w3.org/2000/09/xmldsig#}Signature")
signed.remove(signature)
signed.insert(1, signature)
root.replace(assertion, signed)
sys.stdout.write(etree.tostring(root, encoding="unicode"))
